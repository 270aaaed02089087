/*
 * dynprobe.c: a dynamic probe counter's target, found when it first opens.
 * The kernel's kprobe PMU takes the function's name as a string in config1
 * (or an address in config2 with config1 0) and resolves it itself. The
 * uprobe PMU takes a path in config1 and a file offset in config2, so a
 * uprobe's PATH is found as a command would be (a bare name along $PATH)
 * and made absolute, and its SYMBOL[+OFF] or 0xADDR becomes a file offset
 * through the ELF file's segments (symbols/uprobe_site.c). A USDT marker becomes
 * one uprobe per site, each with the marker's semaphore as ref_ctr_offset
 * so that the kernel raises it while the probe is open. Strings handed to
 * the kernel live in the counter, which outlives its fds. Each refusal is a
 * sentence that names the event, like the other open failures.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "symbols/resolve.h"

/* The uprobe PMU's format/ref_ctr_offset is config:32-63 (a fixed ABI). */
#define REF_CTR_SHIFT 32

int ps_counter__set_probe(struct ps_counter *c, const struct ps_events *evs, size_t i)
{
	struct ps_probe_info pi;
	struct ps_counter_probe *p;

	if (ps_events__probe(evs, i, &pi) != 1)
		return 0;
	if (!(p = calloc(1, sizeof(*p))))
		return -ENOMEM;
	c->probe = p;
	p->kind = pi.kind;
	p->offset = pi.offset;
	if ((pi.path && !(p->path = strdup(pi.path))) ||
	    (pi.symbol && !(p->symbol = strdup(pi.symbol))) ||
	    (pi.provider && !(p->provider = strdup(pi.provider))) ||
	    (pi.name && !(p->name = strdup(pi.name))))
		return -ENOMEM;
	return 0;
}

void ps_counter__free_probe(struct ps_counter *c)
{
	struct ps_counter_probe *p = c->probe;

	if (!p)
		return;
	free(p->path);
	free(p->symbol);
	free(p->provider);
	free(p->name);
	free(p->site_off);
	free(p->site_sem);
	free(p->usdt);
	free(p);
	c->probe = NULL;
}

/* PATH as written, or a bare name along $PATH, made absolute. */
static int find_file(const char *path, char *out)
{
	const char *dirs = getenv("PATH"), *p;
	char buf[PATH_MAX];
	struct stat st;

	if (strchr(path, '/'))
		return realpath(path, out) ? 0 : -errno;
	for (p = dirs && *dirs ? dirs : "/bin:/usr/bin"; *p;) {
		size_t n = strcspn(p, ":");

		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? p : ".", path) <
			(int)sizeof(buf) &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return realpath(buf, out) ? 0 : -errno;
		p += n + (p[n] == ':');
	}
	return -ENOENT;
}

static int sites(struct ps_counter_probe *p, size_t n)
{
	p->site_off = calloc(n, sizeof(*p->site_off));
	p->site_sem = calloc(n, sizeof(*p->site_sem));
	p->nsites = n;
	return p->site_off && p->site_sem ? 0 : -ENOMEM;
}

static int resolve_usdt(struct ps_counter *c, const char *path, char *msg, size_t msglen)
{
	struct ps_counter_probe *p = c->probe;
	struct ps_usdt_site *v = NULL;
	char near[256];
	int n = ps_syms__usdt(path, p->provider, p->name, NULL, 0, near, sizeof(near));

	if (n == 0) {
		snprintf(msg, msglen, "cannot open '%s': no USDT marker '%s:%s' in %s%s%s%s",
			 c->name, p->provider, p->name, path, near[0] ? " (did you mean '" : "",
			 near, near[0] ? "'?)" : " (it has no .note.stapsdt entry of that name)");
		return -ENOENT;
	}
	if (n > 0 && (!(v = calloc((size_t)n, sizeof(*v))) || sites(p, (size_t)n) < 0)) {
		free(v);
		return -ENOMEM;
	}
	if (n > 0)
		n = ps_syms__usdt(path, p->provider, p->name, v, p->nsites, NULL, 0);
	for (size_t i = 0; n > 0 && i < p->nsites; i++) {
		p->site_off[i] = v[i].offset;
		p->site_sem[i] = v[i].semaphore;
	}
	free(p->usdt);
	p->usdt = n > 0 ? v : NULL; /* the sites' arguments, for s:arg(n) */
	if (n <= 0)
		free(v);
	return n < 0 ? n : 0;
}

static int resolve_uprobe(struct ps_counter *c, const char *path, char *msg, size_t msglen)
{
	struct ps_counter_probe *p = c->probe;
	struct ps_symbols *syms;
	uint64_t addr = p->offset;
	char near[64] = "";
	int err = 0;

	if (p->symbol) {
		if (!(syms = ps_symbols__new()))
			return -ENOMEM;
		err = ps_syms__file_symbol(syms, path, p->symbol, &addr, NULL, near, sizeof(near));
		ps_symbols__free(syms);
		if (err == -ENOENT) {
			snprintf(msg, msglen, "cannot open '%s': no function '%s' in %s%s%s%s",
				 c->name, p->symbol, path, near[0] ? " (did you mean '" : "", near,
				 near[0] ? "'?)" : "");
			return err;
		}
		addr += p->offset;
	}
	if (!err && (err = sites(p, 1)) == 0)
		err = ps_syms__file_offset(path, addr, &p->site_off[0]);
	if (err == -ERANGE)
		snprintf(msg, msglen,
			 "cannot open '%s': address 0x%llx is in no loaded segment of %s", c->name,
			 (unsigned long long)addr, path);
	return err;
}

int ps_counter__resolve_probe(struct ps_session *s, uint32_t slot, char *msg, size_t msglen)
{
	struct ps_counter *c = &s->slots[slot];
	struct ps_counter_probe *p = c->probe;
	char path[PATH_MAX], buf[1];
	int err;

	if (!p || p->resolved)
		return 0;
	if (!msg || !msglen) {
		msg = buf;
		msglen = sizeof(buf);
	}
	msg[0] = '\0';
	if (p->kind == PS_PROBE_KPROBE || p->kind == PS_PROBE_KRETPROBE) {
		err = sites(p, 1);
		p->resolved = err == 0;
		return err;
	}
	if ((err = find_file(p->path, path)) < 0) {
		snprintf(msg, msglen, "cannot open '%s': no file '%s'%s", c->name, p->path,
			 strchr(p->path, '/') ? "" : " (not a path, and not found along $PATH)");
		return err;
	}
	if (p->kind == PS_PROBE_USDT)
		err = resolve_usdt(c, path, msg, msglen);
	else
		err = resolve_uprobe(c, path, msg, msglen);
	if (err == -ENOEXEC)
		snprintf(msg, msglen, "cannot open '%s': %s is not an ELF file", c->name, path);
	else if (err < 0 && !msg[0])
		snprintf(msg, msglen, "cannot open '%s': cannot read %s: %s", c->name, path,
			 ps_strerror(err));
	if (err < 0)
		return err;
	free(p->path);
	if (!(p->path = strdup(path)))
		return -ENOMEM;
	p->resolved = true;
	return 0;
}

void ps_counter__probe_attr(const struct ps_counter *c, uint32_t site, struct perf_event_attr *a)
{
	const struct ps_counter_probe *p = c->probe;

	if (!p || !p->resolved || site >= p->nsites)
		return;
	if (p->kind == PS_PROBE_KPROBE || p->kind == PS_PROBE_KRETPROBE) {
		a->config1 = (uint64_t)(uintptr_t)p->symbol; /* NULL: config2 is an address */
		a->config2 = p->offset;
		return;
	}
	a->config1 = (uint64_t)(uintptr_t)p->path;
	a->config2 = p->site_off[site];
	a->config |= p->site_sem[site] << REF_CTR_SHIFT;
}
