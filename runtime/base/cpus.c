/*
 * cpus.c: CPU lists (base/cpus.h). A list is read into a bitmap as wide as
 * its highest CPU, then turned into a sorted array, so "3,0-1,1" is
 * {0, 1, 3}. The online CPUs come from sysfs, read once per call (CPUs go
 * on- and offline; callers that care keep their own copy).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cpus.h"

#define ONLINE "/sys/devices/system/cpu/online"

/* One number of the list at *p; false when there is none or it is too big. */
static bool number(const char **p, long *v)
{
	char *end;

	if (**p < '0' || **p > '9')
		return false;
	errno = 0;
	*v = strtol(*p, &end, 10);
	*p = end;
	return errno == 0 && *v < PS_CPUS_MAX;
}

int ps_cpus__parse(const char *list, int **cpus, int *n)
{
	const char *p = list;
	unsigned char *set = NULL;
	long lo, hi, top = -1;
	int count = 0, err = -EINVAL;

	*cpus = NULL;
	*n = 0;
	if (!list || !*list)
		return -EINVAL;
	set = calloc(PS_CPUS_MAX / 8, 1);
	if (!set)
		return -ENOMEM;
	while (*p) {
		if (!number(&p, &lo))
			goto cleanup;
		hi = lo;
		if (*p == '-' && (p++, !number(&p, &hi)))
			goto cleanup;
		if (lo > hi)
			goto cleanup;
		for (long i = lo; i <= hi; i++)
			set[i / 8] |= (unsigned char)(1u << (i % 8));
		top = hi > top ? hi : top;
		if (*p == ',' && p[1])
			p++;
		else if (*p == '\n' && !p[1])
			p++;
		else if (*p)
			goto cleanup;
	}
	for (long i = 0; i <= top; i++)
		count += set[i / 8] >> (i % 8) & 1;
	*cpus = malloc((count ? count : 1) * sizeof(**cpus));
	err = *cpus ? 0 : -ENOMEM;
	for (long i = 0, j = 0; !err && i <= top; i++)
		if (set[i / 8] >> (i % 8) & 1)
			(*cpus)[j++] = (int)i;
	*n = err ? 0 : count;
cleanup:
	free(set);
	return err;
}

int ps_cpus__online(int **cpus, int *n)
{
	char buf[4096];
	ssize_t len;
	int fd = open(ONLINE, O_RDONLY | O_CLOEXEC), err;

	*cpus = NULL;
	*n = 0;
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	err = len < 0 ? -errno : len == 0 ? -EIO : 0;
	close(fd);
	if (err)
		return err;
	buf[len] = '\0';
	return ps_cpus__parse(buf, cpus, n);
}

int ps_cpus__select(const char *list, int **cpus, int *n)
{
	int *online = NULL, *want = NULL, non = 0, nwant = 0, err, j = 0;

	err = ps_cpus__online(&online, &non);
	if (err || !list) {
		*cpus = online;
		*n = err ? 0 : non;
		return err;
	}
	err = ps_cpus__parse(list, &want, &nwant);
	/* both sorted: every wanted CPU must be met among the online ones */
	for (int i = 0; !err && i < nwant; i++) {
		while (j < non && online[j] < want[i])
			j++;
		if (j == non || online[j] != want[i])
			err = -EINVAL;
	}
	free(online);
	if (err) {
		free(want);
		want = NULL, nwant = 0;
	}
	*cpus = want;
	*n = nwant;
	return err;
}

bool ps_cpus__is_online(int cpu)
{
	int *cpus = NULL, n = 0;
	bool found = false;

	if (ps_cpus__online(&cpus, &n) != 0)
		return true; /* cannot tell: do not blame the CPU */
	for (int i = 0; i < n && !found; i++)
		found = cpus[i] == cpu;
	free(cpus);
	return found;
}
