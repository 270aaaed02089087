/*
 * test_symbols.c: the symbolizer against real processes and the real
 * kernel. The workload helper ($WORKLOAD, default build/tests/workload) is
 * held with --wait-usr1 while its /proc/PID/maps is read and hot_spin is
 * resolved; the address to expect comes independently from the workload's
 * ELF symbol table (libelf) and its load base. After it exits the same
 * address must resolve from MMAP2 records synthesized from the saved maps, and
 * FORK, COMM-exec, EXIT and overlapping mappings are fed as records. A libc
 * function of this process, a kallsyms text symbol (skipped with the reason
 * when kptr_restrict hides addresses), a module symbol when one is loaded,
 * and unknown addresses are checked too. Timings for kallsyms parsing and for
 * repeated and distinct lookups are printed as TAP comments.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfscript.h"
#include "symbols/budget.h"
#include "tap.h"

#define MAXMAPS 256

struct map_line {
	uint64_t start, end, pgoff;
	char perms[8];
	char path[512];
};

static struct map_line maps[MAXMAPS];
static int nmaps;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return s && n >= m && !strcmp(s + n - m, suffix);
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void read_maps(pid_t pid)
{
	char path[64], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	nmaps = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	while (nmaps < MAXMAPS && fgets(line, sizeof(line), f)) {
		struct map_line *m = &maps[nmaps];
		unsigned long long s, e, o;
		int at = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, m->perms, &o, &at) < 4)
			continue;
		m->start = s, m->end = e, m->pgoff = o;
		snprintf(m->path, sizeof(m->path), "%s", line + at);
		m->path[strcspn(m->path, "\n")] = '\0';
		nmaps++;
	}
	fclose(f);
}

/* hot_spin's link-time address and whether the file is position-independent,
 * from the symbol table; plus the lowest PT_LOAD p_vaddr. */
static int elf_symbol(const char *file, const char *name, uint64_t *value, bool *pie,
		      uint64_t *first_vaddr)
{
	int fd = open(file, O_RDONLY), found = -1;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t nph;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph))
		goto out;
	*pie = eh.e_type == ET_DYN;
	*first_vaddr = UINT64_MAX;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_vaddr < *first_vaddr)
			*first_vaddr = ph.p_vaddr;
	}
	while ((scn = elf_nextscn(elf, scn)) && found < 0) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name)) {
				*value = sym.st_value;
				found = 0;
				break;
			}
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

static struct ps_record mmap2(pid_t pid, const struct map_line *m)
{
	return (struct ps_record){
	    .type = PERF_RECORD_MMAP2,
	    .pid = (uint32_t)pid,
	    .tid = (uint32_t)pid,
	    .addr = m->start,
	    .len = m->end - m->start,
	    .pgoff = m->pgoff,
	    .prot = PROT_READ | PROT_EXEC,
	    .flags = MAP_PRIVATE,
	    .filename = m->path,
	};
}

static void test_records(pid_t pid, uint64_t hot, const char *want)
{
	struct ps_symbols *syms = ps_symbols__new();
	struct ps_record r;
	const char *dso = NULL;
	char buf[256];
	int err = 0;
	pid_t child = pid + 100000, other = pid + 200000;

	for (int i = 0; i < nmaps; i++) {
		r = mmap2(pid, &maps[i]);
		/* Data mappings are not reported as code (mmap_data=0). */
		if (maps[i].perms[2] != 'x')
			continue;
		err |= ps_symbols__record(syms, &r);
	}
	tap_ok(err == 0, "MMAP2 records are accepted");
	err = ps_symbols__resolve(syms, pid, hot + 0x10, false, buf, sizeof(buf), &dso);
	tap_ok(err == 0 && !strcmp(buf, want), "after exit, from MMAP2 records: %s", buf);
	tap_ok(ends_with(dso, "/workload"), "its dso is the workload: %s", dso ? dso : "(null)");

	r = (struct ps_record){.type = PERF_RECORD_EXIT, .pid = (uint32_t)pid, .ppid = 1};
	ps_symbols__record(syms, &r);
	err = ps_symbols__resolve(syms, pid, hot + 0x10, false, buf, sizeof(buf), NULL);
	tap_ok(err == 0 && !strcmp(buf, want), "EXIT keeps the mappings: %s", buf);

	r = (struct ps_record){.type = PERF_RECORD_FORK,
			       .pid = (uint32_t)child,
			       .ppid = (uint32_t)pid,
			       .tid = (uint32_t)child,
			       .ptid = (uint32_t)pid};
	tap_ok(ps_symbols__record(syms, &r) == 0, "FORK is accepted");
	err = ps_symbols__resolve(syms, child, hot + 0x10, false, buf, sizeof(buf), NULL);
	tap_ok(err == 0 && !strcmp(buf, want), "FORK copies the mappings to the child: %s", buf);

	r = (struct ps_record){.type = PERF_RECORD_COMM,
			       .pid = (uint32_t)child,
			       .tid = (uint32_t)child,
			       .comm = "workload"};
	ps_symbols__record(syms, &r);
	err = ps_symbols__resolve(syms, child, hot + 0x10, false, buf, sizeof(buf), NULL);
	tap_ok(err == 0 && !strcmp(buf, want), "COMM without exec keeps them: %s", buf);
	r.misc = PERF_RECORD_MISC_COMM_EXEC;
	ps_symbols__record(syms, &r);
	err = ps_symbols__resolve(syms, child, hot + 0x10, false, buf, sizeof(buf), &dso);
	tap_ok(err == -ENOENT && starts_with(buf, "0x"), "COMM exec forgets them: %s (%d)", buf,
	       err);
	tap_is_str(dso, "[unknown]", "an address outside every mapping has dso [unknown]");
	err = ps_symbols__resolve(syms, pid, hot + 0x10, false, buf, sizeof(buf), NULL);
	tap_ok(err == 0 && !strcmp(buf, want), "the parent keeps its own: %s", buf);

	/* Anonymous code over the middle of hot_spin cuts the workload's
	 * mapping in two; both pieces keep resolving (records are page-sized
	 * in practice, but nothing here depends on that). */
	uint32_t before = ps_symbols__epoch(syms, pid);

	r = (struct ps_record){.type = PERF_RECORD_MMAP2,
			       .pid = (uint32_t)pid,
			       .addr = hot + 0x8,
			       .len = 0x4,
			       .prot = PROT_READ | PROT_EXEC,
			       .filename = "//anon"};
	ps_symbols__record(syms, &r);
	err = ps_symbols__resolve(syms, pid, hot + 0x9, false, buf, sizeof(buf), &dso);
	tap_ok(err == -ENOENT && starts_with(buf, "0x"),
	       "an overlapping mmap replaces the range: %s", buf);
	tap_is_str(dso, "[anon]", "anonymous code has dso [anon]");
	tap_ok(ps_symbols__epoch(syms, pid) == before + 1, "and starts a new epoch (%u, was %u)",
	       ps_symbols__epoch(syms, pid), before);
	err = ps_symbols__resolve_at(syms, pid, hot + 0x9, before, buf, sizeof(buf), &dso);
	tap_ok(err == 0 && !strcmp(buf, "hot_spin+0x9") && ends_with(dso, "/workload"),
	       "an address of the epoch before is named by what was mapped then: %s", buf);
	err = ps_symbols__resolve_at(syms, pid, hot + 0x9, before + 1, buf, sizeof(buf), &dso);
	tap_ok(err == -ENOENT && !strcmp(dso, "[anon]"), "and of the new epoch by the new: %s", buf);
	err = ps_symbols__resolve(syms, pid, hot + 0x4, false, buf, sizeof(buf), &dso);
	tap_ok(err == 0 && !strcmp(buf, "hot_spin+0x4") && ends_with(dso, "/workload"),
	       "the piece below it stays: %s", buf);
	err = ps_symbols__resolve(syms, pid, hot + 0x10, false, buf, sizeof(buf), &dso);
	tap_ok(err == 0 && !strcmp(buf, want) && ends_with(dso, "/workload"),
	       "the piece above it stays: %s", buf);

	/* A thread's FORK (pid == ppid) must not touch anything. */
	r = (struct ps_record){.type = PERF_RECORD_FORK,
			       .pid = (uint32_t)other,
			       .ppid = (uint32_t)other,
			       .tid = (uint32_t)other + 1,
			       .ptid = (uint32_t)other};
	tap_ok(ps_symbols__record(syms, &r) == 0, "a thread's FORK is accepted and ignored");
	r = (struct ps_record){.type = PERF_RECORD_LOST, .pid = (uint32_t)pid, .lost = 3};
	tap_ok(ps_symbols__record(syms, &r) == 0, "other record types are ignored");
	ps_symbols__free(syms);
}

static void test_workload(const char *workload)
{
	int out[2];
	pid_t pid;
	FILE *f;
	char line[64], buf[256], want[64];
	const char *dso = NULL;
	uint64_t value = 0, first = 0, hot, base = 0;
	bool pie = false;
	struct ps_symbols *syms;
	int err, status;

	if (pipe(out) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		execl(workload, workload, "--wait-usr1", "spin", "100", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || !starts_with(line, "ready ")) {
		tap_ok(0, "workload %s started", workload);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	read_maps(pid);
	tap_ok(elf_symbol(workload, "hot_spin", &value, &pie, &first) == 0,
	       "hot_spin is in the workload's symbol table");
	/* The load base is where the file's offset 0 is mapped. */
	for (int i = 0; i < nmaps; i++)
		if (ends_with(maps[i].path, "/workload") && maps[i].pgoff == 0 && !base)
			base = maps[i].start;
	hot = pie ? base - (first & ~0xfffull) + value : value;
	snprintf(want, sizeof(want), "hot_spin+0x10");

	syms = ps_symbols__new();
	tap_ok(syms != NULL, "ps_symbols__new");
	tap_is_u64(ps_symbols__add_proc(syms, pid), 0, "add_proc(workload)");
	err = ps_symbols__resolve(syms, pid, hot + 0x10, false, buf, sizeof(buf), &dso);
	tap_ok(err == 0 && !strcmp(buf, want), "hot_spin+0x10 resolves: %s (%d)", buf, err);
	tap_ok(ends_with(dso, "/workload"), "dso ends with workload: %s", dso ? dso : "(null)");
	err = ps_symbols__resolve(syms, pid, hot, false, buf, sizeof(buf), NULL);
	tap_is_str(buf, "hot_spin+0x0", "the function's first byte");
	kill(pid, SIGUSR1);
	waitpid(pid, &status, 0);
	fclose(f);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "workload finished");
	err = ps_symbols__resolve(syms, pid, hot + 0x10, false, buf, sizeof(buf), NULL);
	tap_ok(err == 0 && !strcmp(buf, want), "still resolves after the process exited: %s", buf);
	ps_symbols__free(syms);

	test_records(pid, hot, want);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static void test_self(void)
{
	int fds = count_fds();
	struct ps_symbols *syms = ps_symbols__new();
	/* A PIE reads getpid's address from the GOT: libc's, not a PLT stub. */
	uint64_t addr = (uint64_t)(uintptr_t)&getpid, distinct_base;
	const char *dso = NULL;
	char buf[256];
	double t0, ns;
	int err, n = 1000000, hits = 0;
	pid_t self = getpid(); /* a syscall: keep it out of the timed loops */

	t0 = now_ns();
	tap_is_u64(ps_symbols__add_proc(syms, getpid()), 0, "add_proc(self)");
	tap_diag("add_proc(self): %.1f us", (now_ns() - t0) / 1e3);
	t0 = now_ns();
	err = ps_symbols__resolve(syms, getpid(), addr + 2, false, buf, sizeof(buf), &dso);
	tap_diag("first resolve in libc (opens it, sorts its symbols): %.1f us",
		 (now_ns() - t0) / 1e3);
	tap_ok(err == 0 && (starts_with(buf, "getpid+0x2") || starts_with(buf, "__getpid+0x2")),
	       "libc's getpid resolves: %s", buf);
	tap_ok(dso && strstr(dso, "libc"), "in libc: %s", dso ? dso : "(null)");
	err = ps_symbols__resolve(syms, getpid(), (uint64_t)(uintptr_t)&test_self, false, buf,
				  sizeof(buf), NULL);
	tap_is_str(buf, "test_self+0x0", "a function of this test resolves");

	t0 = now_ns();
	for (int i = 0; i < n; i++)
		hits +=
		    ps_symbols__resolve(syms, self, addr + 2, false, buf, sizeof(buf), NULL) == 0;
	ns = (now_ns() - t0) / n;
	tap_ok(hits == n, "a hot address resolves every time");
	tap_diag("resolve, one hot address (cached): %.1f ns", ns);

	/* Distinct addresses: every 16th byte of libc's text around getpid. */
	distinct_base = addr > (1 << 20) ? addr - (1 << 19) : addr;
	n = 50000;
	hits = 0;
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		hits += ps_symbols__resolve(syms, self, distinct_base + 16 * (uint64_t)i, false,
					    buf, sizeof(buf), NULL) == 0;
	ns = (now_ns() - t0) / n;
	tap_diag("resolve, %d distinct addresses (uncached): %.1f ns, %d named", n, ns, hits);
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		ps_symbols__resolve(syms, self, distinct_base + 16 * (uint64_t)i, false, buf,
				    sizeof(buf), NULL);
	tap_diag("resolve, the same %d again (cached): %.1f ns", n, (now_ns() - t0) / n);
	tap_ok(hits > 0, "distinct libc addresses resolve");
	tap_is_u64(count_fds(), fds, "no file stays open once its symbols are read");
	ps_symbols__free(syms);
}

/* do_syscall_64, or else the first core text symbol no other shares. */
static bool pick_ksym(char *name, size_t len, uint64_t *addr)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], n[256], t;
	unsigned long long a;
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &t, n) == 3 && t == 'T' &&
		    !strchr(line, '[') && !strcmp(n, "do_syscall_64")) {
			snprintf(name, len, "%s", n);
			*addr = a;
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Whether any other symbol lies in [addr, addr + span]. */
static bool ksym_alone(uint64_t addr, const char *name, uint64_t span)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], n[256], t;
	unsigned long long a;
	bool alone = true;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &t, n) == 3 && a >= addr &&
		    a <= addr + span && strcmp(n, name))
			alone = false;
	if (f)
		fclose(f);
	return alone;
}

static bool pick_module_sym(char *name, size_t len, char *mod, size_t modlen, uint64_t *addr)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], n[256], m[128], t;
	unsigned long long a;
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s %127s", &a, &t, n, m) == 4 &&
		    (t == 't' || t == 'T') && m[0] == '[' && a && strcmp(m, "[bpf]") &&
		    ksym_alone(a, n, 0)) {
			snprintf(name, len, "%s", n);
			snprintf(mod, modlen, "%s", m);
			*addr = a;
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static void test_kernel(void)
{
	struct ps_symbols *syms = ps_symbols__new();
	char name[256], mod[128], buf[256], want[300];
	const char *dso = NULL;
	uint64_t addr = 0;
	double t0;
	int err;

	t0 = now_ns();
	err = ps_symbols__load_kernel(syms);
	tap_diag("kallsyms parse: %.1f ms", (now_ns() - t0) / 1e6);
	if (err == -EACCES) {
		tap_skip("kernel addresses hidden (kptr_restrict or not root)", "kernel symbol");
		err = ps_symbols__resolve(syms, 0, 0xffffffff81000010ull, true, buf, sizeof(buf),
					  NULL);
		tap_ok(err == -ENOENT && starts_with(buf, "0x"),
		       "hidden kernel addresses give hex");
		ps_symbols__free(syms);
		return;
	}
	tap_is_u64(err, 0, "load_kernel");
	if (!pick_ksym(name, sizeof(name), &addr) || !ksym_alone(addr, name, 0x10)) {
		tap_skip("no unaliased do_syscall_64 in /proc/kallsyms", "kernel symbol");
	} else {
		err = ps_symbols__resolve(syms, 0, addr + 0x10, true, buf, sizeof(buf), &dso);
		snprintf(want, sizeof(want), "%s+0x10", name);
		tap_ok(err == 0 && !strcmp(buf, want), "kernel %s: %s", want, buf);
		tap_is_str(dso, "[kernel.kallsyms]", "kernel dso");
	}
	if (!pick_module_sym(name, sizeof(name), mod, sizeof(mod), &addr)) {
		tap_skip("no module symbols in /proc/kallsyms", "module symbol");
	} else {
		err = ps_symbols__resolve(syms, 0, addr, true, buf, sizeof(buf), &dso);
		snprintf(want, sizeof(want), "%s+0x0", name);
		tap_ok(err == 0 && !strcmp(buf, want) && dso && !strcmp(dso, mod),
		       "module symbol %s in %s: %s in %s", want, mod, buf, dso ? dso : "(null)");
	}
	err = ps_symbols__resolve(syms, 0, 0x1000, true, buf, sizeof(buf), &dso);
	tap_ok(err == -ENOENT && !strcmp(buf, "0x1000"), "a user address as kernel gives hex: %s",
	       buf);
	ps_symbols__free(syms);
}

static void test_unknown(void)
{
	struct ps_symbols *syms = ps_symbols__new();
	struct ps_record r = {.type = PERF_RECORD_MMAP2,
			      .pid = 4242,
			      .addr = 0x400000,
			      .len = 0x1000,
			      .prot = PROT_EXEC,
			      .filename = "/nonexistent/lib.so"};
	const char *dso = NULL;
	char buf[256], tiny[4];
	int err;

	err = ps_symbols__resolve(syms, getpid(), 0x10, false, buf, sizeof(buf), &dso);
	tap_ok(err == -ENOENT && !strcmp(buf, "0x10"), "an unmapped address gives hex: %s", buf);
	tap_is_str(dso, "[unknown]", "and dso [unknown]");
	err =
	    ps_symbols__resolve(syms, 0x3ffffff0, 0x7f0000001000ull, false, buf, sizeof(buf), NULL);
	tap_ok(err == -ENOENT && !strcmp(buf, "0x7f0000001000"), "an unknown pid gives hex: %s",
	       buf);
	tap_is_u64(ps_symbols__add_proc(syms, 0x3ffffff0), -ESRCH,
		   "add_proc of no process: -ESRCH");
	tap_is_u64(ps_symbols__record(syms, &r), 0, "an MMAP2 of a missing file is accepted");
	err = ps_symbols__resolve(syms, 4242, 0x400010, false, buf, sizeof(buf), &dso);
	tap_ok(err == -ENOENT && !strcmp(buf, "lib.so+0x10"),
	       "a missing file gives its name and the offset: %s", buf);
	tap_is_str(dso, "/nonexistent/lib.so", "and names the file");
	err = ps_symbols__resolve(syms, getpid(), 0x123456, false, tiny, sizeof(tiny), NULL);
	tap_ok(err == -ENOENT && !strcmp(tiny, "0x1"), "a short buffer truncates: %s", tiny);
	tap_is_u64(ps_symbols__resolve(syms, getpid(), 1, false, NULL, 0, NULL), -EINVAL,
		   "a NULL buffer is -EINVAL");
	ps_symbols__free(syms);
	ps_symbols__free(NULL);
	tap_ok(1, "ps_symbols__free(NULL)");
}

/* The budget: with 1 MiB, trim gives files back, and they answer the same
 * when asked again (they open anew). */
static void test_budget(void)
{
	struct ps_symbols *syms = ps_symbols__new();
	struct ps_symbols_stats st = {.sz = sizeof(st)};
	uint64_t libc = (uint64_t)(uintptr_t)&getpid + 2, self = (uint64_t)(uintptr_t)&test_budget;
	char a[256], b[256], c[256], d[256];
	size_t evicted, held;

	ps_symbols__add_proc(syms, getpid());
	ps_symbols__resolve(syms, getpid(), libc, false, a, sizeof(a), NULL);
	ps_symbols__resolve(syms, getpid(), self, false, b, sizeof(b), NULL);
	ps_symbols__stats(syms, &st);
	/* (what the files hold of this process's memory: the pages it read) */
	tap_ok(st.files_open >= 2 && st.bytes > (64u << 10) && st.budget == 128u << 20,
	       "two files read: %zu of %zu open, %zu bytes, budget %zu", st.files_open, st.files,
	       st.bytes, st.budget);
	tap_is_u64(ps_symbols__trim(syms), 0, "under the default budget, trim gives nothing back");
	held = st.bytes;
	ps_symbols__set_budget(syms, held / 2);
	evicted = ps_symbols__trim(syms);
	ps_symbols__stats(syms, &st);
	tap_ok(evicted >= 1 && st.evictions == evicted && st.bytes <= held / 8 * 3,
	       "at half of %zu bytes, trim gives %zu files back: %zu bytes left", held, evicted,
	       st.bytes);
	ps_symbols__resolve(syms, getpid(), libc, false, c, sizeof(c), NULL);
	ps_symbols__resolve(syms, getpid(), self, false, d, sizeof(d), NULL);
	tap_ok(!strcmp(a, c) && !strcmp(b, d), "and they answer the same after: %s, %s", c, d);
	ps_symbols__free(syms);
	tap_ok(ps_symbols__stats(NULL, &st) == -EINVAL && ps_symbols__trim(NULL) == 0,
	       "NULL: stats -EINVAL, trim 0");
}

int main(void)
{
	const char *workload = getenv("WORKLOAD");

	if (!workload || !*workload)
		workload = "build/tests/workload";
	if (access(workload, X_OK) == 0)
		test_workload(workload);
	else
		tap_skip("no workload helper (make build/tests/workload)", "workload symbols");
	test_self();
	test_budget();
	test_kernel();
	test_unknown();
	return tap_done();
}
