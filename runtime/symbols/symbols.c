/*
 * symbols.c: the public ps_symbols__* calls for names. resolve() is on the
 * per-sample path, so it remembers the last process and each process its
 * last mapping (symbols/maps.c), computes a mapping's file-to-module
 * adjustment once, and leaves the per-address cache to the file
 * (symbols/user.c). An address it cannot name still says where it is: in
 * a file, as that file and the offset in it ("liblzma.so.5.4.1+0x1692b",
 * what perf report prints, stable across runs whatever ASLR does); in
 * anonymous memory, as a JIT's /tmp/perf-PID.map names it
 * (symbols/jit.c), else as hex. The kernel goes to symbols/kernel.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"
#include "symbols/python.h"

/* resolve_user: no name, but buf holds the file+offset form. */
#define PS_PLACED 1

struct ps_symbols *ps_symbols__new(void)
{
	struct ps_symbols *syms = calloc(1, sizeof(*syms));

	if (!syms)
		return NULL;
	ps_pidmap__init(&syms->procs, sizeof(struct ps_proc *));
	syms->ksyms_err = 1;
	return syms;
}

void ps_symbols__free(struct ps_symbols *syms)
{
	if (!syms)
		return;
	ps_procs__free(syms);
	ps_python__free(syms);
	ps_pysplice__free(syms);
	ps_unwinders__free(syms);
	ps_dsos__free(&syms->dsos);
	ps_ksyms__free(syms->ksyms);
	free(syms);
}

void ps_symbols__set_raw_names(struct ps_symbols *syms, bool raw)
{
	if (!syms || syms->dsos.raw_names == raw)
		return;
	syms->dsos.raw_names = raw;
	ps_dsos__flush(&syms->dsos);
}

int ps_symbols__seen(struct ps_symbols *syms, pid_t pid)
{
	struct ps_proc *p;

	if (!syms || pid <= 0)
		return -EINVAL;
	p = ps_procs__known(syms, pid);
	if (!p)
		return -ENOMEM;
	p->sampled = true; /* kept longer after it exits (symbols/gone.c) */
	return 0;
}

int ps_symbols__load_kernel(struct ps_symbols *syms)
{
	if (!syms)
		return -EINVAL;
	if (syms->ksyms_err == 1)
		syms->ksyms_err = ps_ksyms__load(&syms->ksyms);
	if (syms->ksyms_err)
		return syms->ksyms_err;
	return ps_ksyms__hidden(syms->ksyms) ? -EACCES : 0;
}

static void copy_out(char *buf, size_t len, const char *str)
{
	size_t n = strlen(str);

	/* The hot path: one copy, no formatting. */
	if (n >= len)
		n = len - 1;
	memcpy(buf, str, n);
	buf[n] = '\0';
}

static int resolve_user(struct ps_symbols *syms, pid_t pid, uint64_t addr, uint32_t epoch,
			char *buf, size_t len, const char **dso)
{
	struct ps_proc *p = ps_procs__known(syms, pid);
	struct ps_map *m;
	const char *str;

	if (!p)
		return -ENOMEM;
	m = ps_procs__lookup_at(syms, p, addr, epoch);
	if (!m || !m->dso) {
		if (ps_jit__lookup(syms, p, addr, buf, len, dso) == 0)
			return 0;
		if (m)
			*dso = m->label;
		return -ENOENT;
	}
	*dso = m->label;
	if (ps_map__adjust(m) && ps_dso__lookup(m->dso, addr + (uint64_t)m->adj, &str) == 0) {
		copy_out(buf, len, str);
		return 0;
	}
	snprintf(buf, len, "%s+0x%" PRIx64, m->dso->base_name, addr - m->start + m->pgoff);
	return PS_PLACED;
}

int ps_symbols__resolve(struct ps_symbols *syms, pid_t pid, uint64_t addr, bool kernel, char *buf,
			size_t len, const char **dso)
{
	return ps_symbols__resolve_at(syms, pid, addr, kernel ? PS_EPOCH_KERNEL : PS_EPOCH_NOW, buf,
				      len, dso);
}

int ps_symbols__resolve_at(struct ps_symbols *syms, pid_t pid, uint64_t addr, uint32_t epoch,
			   char *buf, size_t len, const char **dso)
{
	bool kernel = epoch == PS_EPOCH_KERNEL;
	const char *d = "[unknown]";
	int err;

	if (!syms || !buf || !len)
		return -EINVAL;
	if (kernel) {
		err = ps_symbols__load_kernel(syms);
		if (!err)
			err = ps_ksyms__resolve(syms->ksyms, addr, buf, len, &d);
		else
			d = "[kernel.kallsyms]";
	} else if (ps_python__is_frame(addr)) {
		const char *func;

		err = ps_python__resolve(syms, addr, &func, NULL);
		if (!err) {
			copy_out(buf, len, func);
			d = "[python]";
		}
	} else {
		err = resolve_user(syms, pid, addr, epoch, buf, len, &d);
	}
	if (err == PS_PLACED) {
		err = -ENOENT;
	} else if (err) {
		/* Unknown is an answer, not a failure: show the address. Only
		 * running out of memory is worth telling apart. */
		snprintf(buf, len, "0x%" PRIx64, addr);
		if (err != -ENOMEM)
			err = -ENOENT;
	}
	if (dso)
		*dso = d;
	return err;
}

int ps_symbols__srcframes(struct ps_symbols *syms, pid_t pid, uint64_t addr,
			  const struct ps_srcframe **frames)
{
	return ps_symbols__srcframes_at(syms, pid, addr, PS_EPOCH_NOW, frames);
}

int ps_symbols__srcframes_at(struct ps_symbols *syms, pid_t pid, uint64_t addr, uint32_t epoch,
			     const struct ps_srcframe **frames)
{
	struct ps_proc *p;
	struct ps_map *m;

	if (!syms || !frames)
		return -EINVAL;
	if (ps_python__is_frame(addr)) {
		static __thread struct ps_srcframe py;
		const char *func;

		if (ps_python__resolve(syms, addr, &func, &py) < 0 || !py.file)
			return 0;
		*frames = &py;
		return 1;
	}
	p = ps_procs__known(syms, pid);
	if (!p)
		return -ENOMEM;
	m = ps_procs__lookup_at(syms, p, addr, epoch);
	if (!m || !m->dso || !ps_map__adjust(m))
		return 0;
	return ps_dso__srcframes(m->dso, addr + (uint64_t)m->adj, frames);
}

int ps_symbols__mapping(struct ps_symbols *syms, pid_t pid, uint64_t addr,
			struct ps_mapping_info *out)
{
	return ps_symbols__mapping_at(syms, pid, addr, PS_EPOCH_NOW, out);
}

int ps_symbols__mapping_at(struct ps_symbols *syms, pid_t pid, uint64_t addr, uint32_t epoch,
			   struct ps_mapping_info *out)
{
	struct ps_proc *p;
	struct ps_map *m;
	struct ps_dso *d = NULL;
	const struct ps_srcframe *sf;

	if (!syms || !out || out->sz < sizeof(*out))
		return -EINVAL;
	*out = (struct ps_mapping_info){.sz = sizeof(*out)};
	if (!(p = ps_procs__known(syms, pid)))
		return -ENOMEM;
	if (!(m = ps_procs__lookup_at(syms, p, addr, epoch)))
		return -ENOENT;
	out->start = m->start;
	out->limit = m->end;
	out->offset = m->pgoff;
	out->path = m->dso ? ps_dso__name(m->dso) : m->label;
	if (m->dso && ps_dso__open_symbols(m->dso, &d) == 0) {
		static const char hex[] = "0123456789abcdef";
		size_t i = 0;

		for (; i < d->build_id_len && i < 20; i++) { /* snprintf took half the call */
			out->build_id[2 * i] = hex[d->build_id[i] >> 4];
			out->build_id[2 * i + 1] = hex[d->build_id[i] & 15];
		}
		out->build_id[2 * i] = '\0';
		int n =
		    ps_map__adjust(m) ? ps_dso__srcframes(m->dso, addr + (uint64_t)m->adj, &sf) : 0;

		out->has_functions = d->nsyms > 0;
		out->has_lines = n > 0;
		out->dwarf_name = n > 0 ? sf[n - 1].func : NULL;
		out->symbol =
		    ps_map__adjust(m) ? ps_dso__raw_name(m->dso, addr + (uint64_t)m->adj) : NULL;
	}
	return 0;
}

int ps_symbols__lookup(struct ps_symbols *syms, pid_t pid, const char *name, uint64_t *addr)
{
	if (!syms || pid <= 0 || !name || !*name || !addr)
		return -EINVAL;
	return ps_syms__lookup(syms, pid, name, addr, NULL, 0);
}

void ps_symbols__tell(struct ps_symbols *syms, const char *fmt, ...)
{
	va_list ap;

	if (syms->notice_n == PS_NOTICES)
		return;
	va_start(ap, fmt);
	vsnprintf(syms->notices[(syms->notice_head + syms->notice_n++) % PS_NOTICES],
		  sizeof(syms->notices[0]), fmt, ap);
	va_end(ap);
}

int ps_symbols__notice(struct ps_symbols *syms, char *buf, size_t len)
{
	if (!syms || !syms->notice_n)
		return 0;
	snprintf(buf, len, "%s", syms->notices[syms->notice_head]);
	syms->notice_head = (syms->notice_head + 1) % PS_NOTICES;
	syms->notice_n--;
	return 1;
}
