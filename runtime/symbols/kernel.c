/*
 * kernel.c: kernel addresses to names, from /proc/kallsyms. The file
 * is read once, on the first kernel lookup, into one buffer that then also
 * holds the names (each line's newline becomes the NUL that ends it), and
 * its text symbols go into an array sorted by address for a binary search.
 * The file has ~100-200k lines and is parsed by hand rather than with
 * sscanf, which is several times slower. kallsyms gives no sizes, so an
 * address belongs to the closest symbol below it, but no further than
 * PS_KSYM_MAX_SPAN past it: that keeps addresses in the gaps between the
 * kernel image and the modules, or past the last symbol, unresolved. When
 * kptr_restrict hides them every address reads 0; the table is then empty
 * and lookups give hex.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/array.h"
#include "symbols/internal.h"

#define PS_KSYM_MAX_SPAN (1u << 20)
#define PS_KSYM_PFX	 UINT32_MAX /* a name: "__pfx_" + the next entry's */
#define PS_KALLSYMS	 "/proc/kallsyms"

/* A text symbol as the file is parsed: names are offsets into the file's
 * text, where no name or module starts at 0. */
struct ps_ksym {
	uint64_t addr;
	uint32_t name;	      /* offset in ps_ksyms.text */
	uint32_t module : 29; /* offset of "[ext4]" in ps_ksyms.text, 0 for the kernel */
	uint32_t rank : 3;    /* among symbols at one address, lower is preferred */
};

/* What is kept: 8 bytes a symbol (there are over 100,000), one per
 * address, its offset from the lowest; modules by runs of symbols. */
struct ps_kentry {
	uint32_t off, name;
};

struct ps_krun {
	uint32_t first;	 /* the first symbol of the run */
	uint32_t module; /* offset of "[ext4]" in ps_ksyms.text, 0 for the kernel */
};

struct ps_ksyms {
	char *text;
	struct ps_ksym *syms; /* while parsing */
	size_t n;
	uint64_t base;
	struct ps_kentry *v;
	size_t nv;
	struct ps_krun *runs;
	size_t nruns;
	bool hidden;
};

static int read_all(const char *path, char **out, size_t *outlen)
{
	size_t cap = 1 << 22, len = 0;
	char *buf = malloc(cap);
	int fd, err = 0;
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	/* procfs reports a size of 0: read until EOF, growing as needed. */
	for (;;) {
		if (ps_array__reserve(&buf, &cap, len + 2, 1)) {
			err = -ENOMEM;
			goto cleanup;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto cleanup;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
cleanup:
	if (fd >= 0)
		close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ps_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static inline int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "ffffffff81000000 T _text" or "... t name\t[module]". Returns the line's
 * end; *sym is filled only for a text symbol. */
static char *parse_line(const char *base, char *p, char *end, struct ps_ksym *sym, bool *ok)
{
	uint64_t addr = 0;
	char *nl = memchr(p, '\n', (size_t)(end - p)), *name, *tab;
	int v;
	char type;

	*ok = false;
	if (!nl)
		nl = end;
	*nl = '\0';
	while ((v = hexval(*p)) >= 0) {
		addr = addr << 4 | (uint64_t)v;
		p++;
	}
	if (p[0] != ' ' || !p[1] || p[2] != ' ')
		return nl;
	type = p[1];
	/* Only code: samples and callchains hold instruction addresses. */
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return nl;
	name = p + 3;
	tab = strchr(name, '\t');
	sym->module = 0;
	if (tab) {
		*tab = '\0';
		if (tab[1] == '[' && tab + 1 - base < (1 << 29))
			sym->module = (uint32_t)(tab + 1 - base) & ((1u << 29) - 1);
	}
	sym->addr = addr;
	sym->name = (uint32_t)(name - base);
	/* Several names often share an address (_text, _stext, ...): prefer a
	 * global one, then one without leading underscores. */
	sym->rank = (type == 'T' ? 0 : type == 't' ? 2 : 4) + (name[0] == '_');
	*ok = true;
	return nl;
}

/* Keep only what is looked up: one symbol an address (the preferred name,
 * first after the sort), 8 bytes each, with the text symbols' names (and
 * one copy of each module's) in a buffer of their size. The file's whole
 * text (5.3 MB here, with every address in hex and the data symbols) and
 * the parsing table go: reading the kernel's names raised RSS by 9.2 MB
 * here, then 5.0 with 16-byte entries, then about 4. Addresses more than
 * 4 GiB above the lowest (none on x86-64 or arm64: modules sit within
 * 2 GiB of the kernel) are left out. A kernel built with function padding
 * (6.2 and later) has a "__pfx_NAME" symbol 16 bytes before nearly every
 * function NAME: 57846 of 122079 text symbols here, 1.6 MB of names. Such
 * an entry keeps no name of its own; it is the next one's, with the
 * prefix. */
/* Whether parsed symbol i goes: a second name at an address (the first,
 * after the sort, is the preferred one), or too far above the lowest. */
static bool left_out(const struct ps_ksyms *ks, size_t i)
{
	const struct ps_ksym *s = &ks->syms[i];

	return (i && s->addr == s[-1].addr) || s->addr - ks->base > UINT32_MAX;
}

/* Whether kept symbol i is "__pfx_" + the name of the next kept one, in
 * the same module (whose own name is then kept: it has no such prefix). */
static bool pfx_of_next(const struct ps_ksyms *ks, size_t i)
{
	const char *name = ks->text + ks->syms[i].name;
	size_t j = i + 1;

	if (strncmp(name, "__pfx_", 6))
		return false;
	while (j < ks->n && left_out(ks, j))
		j++;
	return j < ks->n && ks->syms[j].module == ks->syms[i].module &&
	       !strcmp(ks->text + ks->syms[j].name, name + 6) && strncmp(name + 6, "__pfx_", 6);
}

static int compact(struct ps_ksyms *ks)
{
	size_t bytes = 1, at = 1, nv = 0, nruns = 0; /* offset 0 stays unused: "no module" */
	uint32_t last = 0, kept = 0;
	const char *t = ks->text;
	char *names = NULL;

	ks->base = ks->n ? ks->syms[0].addr : 0;
	for (size_t i = 0; i < ks->n; i++) {
		const struct ps_ksym *s = &ks->syms[i];

		if (left_out(ks, i))
			continue;
		if (!pfx_of_next(ks, i))
			bytes += strlen(t + s->name) + 1;
		if (s->module != last || !nv)
			nruns++;
		if (s->module && s->module != last)
			bytes += strlen(t + s->module) + 1;
		last = s->module;
		nv++;
	}
	if (bytes >= UINT32_MAX || !(names = malloc(bytes)) ||
	    !(ks->v = malloc((nv ? nv : 1) * sizeof(*ks->v))) ||
	    !(ks->runs = malloc((nruns ? nruns : 1) * sizeof(*ks->runs)))) {
		free(names);
		return -ENOMEM;
	}
	names[0] = '\0';
	last = 0;
	for (size_t i = 0; i < ks->n; i++) {
		const struct ps_ksym *s = &ks->syms[i];
		size_t n = strlen(t + s->name) + 1;

		if (left_out(ks, i))
			continue;
		if (s->module != last || !ks->nv) {
			if (s->module && s->module != last) {
				size_t m = strlen(t + s->module) + 1;

				memcpy(names + at, t + s->module, m);
				kept = (uint32_t)at;
				at += m;
			}
			ks->runs[ks->nruns++] = (struct ps_krun){.first = (uint32_t)ks->nv,
								 .module = s->module ? kept : 0};
		}
		last = s->module;
		if (pfx_of_next(ks, i)) {
			ks->v[ks->nv++] = (struct ps_kentry){.off = (uint32_t)(s->addr - ks->base),
							     .name = PS_KSYM_PFX};
			continue;
		}
		memcpy(names + at, t + s->name, n);
		ks->v[ks->nv++] =
		    (struct ps_kentry){.off = (uint32_t)(s->addr - ks->base), .name = (uint32_t)at};
		at += n;
	}
	free(ks->text);
	free(ks->syms);
	ks->text = names;
	ks->syms = NULL;
	ks->n = 0;
	return 0;
}

int ps_ksyms__load(struct ps_ksyms **out)
{
	struct ps_ksyms *ks = calloc(1, sizeof(*ks));
	size_t len, cap = 0, nonzero = 0;
	char *p, *end;
	int err;

	if (!ks)
		return -ENOMEM;
	err = read_all(PS_KALLSYMS, &ks->text, &len);
	if (err)
		goto cleanup;
	/* ~30 bytes a line: an estimate that avoids most reallocs. */
	cap = len / 32 + 16;
	ks->syms = malloc(cap * sizeof(*ks->syms));
	if (!ks->syms) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (p = ks->text, end = ks->text + len; p < end; p++) {
		struct ps_ksym sym;
		bool ok;

		p = parse_line(ks->text, p, end, &sym, &ok);
		if (!ok)
			continue;
		if (sym.addr)
			nonzero++;
		if (ps_array__reserve(&ks->syms, &cap, ks->n + 1, sizeof(*ks->syms))) {
			err = -ENOMEM;
			goto cleanup;
		}
		ks->syms[ks->n++] = sym;
	}
	if (!nonzero) {
		ks->hidden = true;
		ks->n = 0;
	}
	qsort(ks->syms, ks->n, sizeof(*ks->syms), ksym_cmp);
	err = compact(ks);
cleanup:
	if (err) {
		ps_ksyms__free(ks);
		return err;
	}
	*out = ks;
	return 0;
}

void ps_ksyms__free(struct ps_ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->v);
	free(ks->runs);
	free(ks->text);
	free(ks);
}

bool ps_ksyms__hidden(const struct ps_ksyms *ks)
{
	return ks->hidden;
}

int ps_ksyms__resolve(const struct ps_ksyms *ks, uint64_t addr, char *buf, size_t len,
		      const char **dso)
{
	size_t lo = 0, hi = ks->nv, r;
	uint64_t off = addr - ks->base;
	const struct ps_kentry *e, *named;

	if (addr < ks->base || !ks->nv)
		return -ENOENT;
	/* the last symbol at or below addr (one an address, the preferred) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->v[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	e = &ks->v[lo - 1];
	if (off - e->off >= PS_KSYM_MAX_SPAN)
		return -ENOENT;
	/* a "__pfx_" entry is followed by the one it names (compact()) */
	named = e->name == PS_KSYM_PFX ? e + 1 : e;
	snprintf(buf, len, "%s%s+0x%" PRIx64, named == e ? "" : "__pfx_", ks->text + named->name,
		 off - e->off);
	if (dso) {
		/* its module: the last run that starts at or before it */
		for (lo = 0, hi = ks->nruns; lo < hi;) {
			size_t mid = lo + (hi - lo) / 2;

			if (ks->runs[mid].first <= (uint32_t)(e - ks->v))
				lo = mid + 1;
			else
				hi = mid;
		}
		r = lo ? lo - 1 : 0;
		*dso = ks->nruns && ks->runs[r].module ? ks->text + ks->runs[r].module
						       : "[kernel.kallsyms]";
	}
	return 0;
}
