/*
 * reuse.c: an address that names two functions in turn. Loads
 * libreuse_a.so, spins MS milliseconds in its a_leaf, unloads it, loads
 * libreuse_b.so (which the loader puts at the same address) and spins as
 * long in its b_leaf; prints both load addresses. A profile must give
 * each half to its own library.
 *   reuse [MS]    the libraries are beside the program
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *spin_in(const char *dir, const char *lib, const char *sym, double ms)
{
	char path[PATH_MAX];
	void *h, *base;
	void (*leaf)(double);
	Dl_info info;

	snprintf(path, sizeof(path), "%s/%s", dir, lib);
	if (!(h = dlopen(path, RTLD_NOW)) || !(leaf = (void (*)(double))dlsym(h, sym))) {
		fprintf(stderr, "reuse: %s\n", dlerror());
		exit(1);
	}
	base = dladdr((void *)leaf, &info) ? info.dli_fbase : NULL;
	leaf(ms);
	dlclose(h);
	return base;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 500;
	char dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	void *a, *b;

	if (n < 0)
		return 1;
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';
	a = spin_in(dir, "libreuse_a.so", "a_leaf", ms);
	b = spin_in(dir, "libreuse_b.so", "b_leaf", ms);
	printf("a %p b %p %s\n", a, b, a == b ? "same" : "different");
	return 0;
}
