/*
 * bpfconf.c: one BPF configuration per counter, merged from everything that
 * asked for one (a script's several perfmon.sample probes with options, a
 * perfmon.aggregate call) and handed to the session only when it changed,
 * so a counter's program is loaded once and not once per probe. Fields a
 * request sets replace earlier ones; the mode bits (forward, aggregate) add
 * up, so a counter that aggregates and also has a sample handler forwards.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "loop/internal.h"

struct ps_bpf_conf {
	ps_handle h;
	struct ps_bpf_opts o; /* pids and cpus point into the arrays below */
	pid_t *pids;
	int *cpus;
	bool dirty;
};

static struct ps_bpf_conf *conf_of(struct ps_driver *d, ps_handle h, bool create)
{
	struct ps_bpf_conf *c;

	for (size_t i = 0; i < d->nconfs; i++)
		if (d->confs[i].h == h)
			return &d->confs[i];
	if (!create || ps_array__reserve(&d->confs, &d->capconfs, d->nconfs + 1, sizeof(*c)))
		return NULL;
	c = &d->confs[d->nconfs++];
	memset(c, 0, sizeof(*c));
	c->h = h;
	c->o.sz = sizeof(c->o);
	return c;
}

int ps_driver__merge_bpf(struct ps_driver *d, ps_handle h, const struct ps_bpf_opts *o)
{
	struct ps_bpf_conf *c;
	pid_t *pids = NULL;
	int *cpus = NULL;

	if (!d || !o || o->sz < offsetof(struct ps_bpf_opts, entries) + sizeof(o->entries))
		return -EINVAL;
	c = conf_of(d, h, true);
	if (!c || (o->npids && !(pids = malloc(o->npids * sizeof(*pids)))) ||
	    (o->ncpus && !(cpus = malloc(o->ncpus * sizeof(*cpus))))) {
		free(pids);
		return -ENOMEM;
	}
	if (pids) {
		memcpy(pids, o->pids, o->npids * sizeof(*pids));
		free(c->pids);
		c->pids = pids;
	}
	if (cpus) {
		memcpy(cpus, o->cpus, o->ncpus * sizeof(*cpus));
		free(c->cpus);
		c->cpus = cpus;
	}
	c->dirty |=
	    o->backend || o->npids || o->ncpus || o->tid || o->priv || o->every || o->keys ||
	    o->entries || (o->mode & ~c->o.mode) ||
	    ((o->mode & (PS_BPF_OFFCPU | PS_BPF_ONCPU)) && o->offcpu_min_ns != c->o.offcpu_min_ns);
	c->o.backend = o->backend ? o->backend : c->o.backend;
	c->o.npids = o->npids ? o->npids : c->o.npids;
	c->o.ncpus = o->ncpus ? o->ncpus : c->o.ncpus;
	c->o.tid = o->tid ? o->tid : c->o.tid;
	c->o.priv = o->priv ? o->priv : c->o.priv;
	c->o.every = o->every ? o->every : c->o.every;
	c->o.keys = o->keys ? o->keys : c->o.keys;
	c->o.entries = o->entries ? o->entries : c->o.entries;
	if ((o->keys & PS_AGG_FIELD) &&
	    o->sz >= offsetof(struct ps_bpf_opts, field_signed) + sizeof(o->field_signed)) {
		c->o.field_offset = o->field_offset;
		c->o.field_size = o->field_size;
		c->o.field_signed = o->field_signed;
		if (o->sz >= offsetof(struct ps_bpf_opts, usdt_arg) + sizeof(o->usdt_arg))
			c->o.usdt_arg = o->usdt_arg;
	}
	if ((o->mode & (PS_BPF_OFFCPU | PS_BPF_ONCPU)) &&
	    o->sz >= offsetof(struct ps_bpf_opts, offcpu_min_ns) + sizeof(o->offcpu_min_ns))
		c->o.offcpu_min_ns = o->offcpu_min_ns;
	c->o.mode |= o->mode;
	return 0;
}

int ps_driver__want_samples(struct ps_driver *d, ps_handle h)
{
	struct ps_bpf_conf *c = d ? conf_of(d, h, false) : NULL;

	if (c && !(c->o.mode & PS_BPF_FORWARD)) {
		c->o.mode |= PS_BPF_FORWARD;
		c->dirty = true;
	}
	return 0;
}

int ps_driver__apply_bpf(struct ps_driver *d, char *msg, size_t msglen)
{
	for (size_t i = 0; i < d->nconfs; i++) {
		struct ps_bpf_conf *c = &d->confs[i];
		int rc;

		if (!c->dirty || ps_session__check(d->s, c->h) < 0)
			continue;
		c->o.pids = c->pids;
		c->o.cpus = c->cpus;
		rc = ps_session__set_bpf(d->s, c->h, &c->o, msg, msglen);
		if (rc < 0) {
			if (msg && msglen && !msg[0])
				snprintf(msg, msglen, "cannot configure '%s': %s",
					 ps_session__name(d->s, c->h), ps_strerror(rc));
			return rc;
		}
		c->dirty = false;
	}
	return 0;
}

void ps_driver__free_confs(struct ps_driver *d)
{
	for (size_t i = 0; i < d->nconfs; i++) {
		free(d->confs[i].pids);
		free(d->confs[i].cpus);
	}
	free(d->confs);
	d->confs = NULL;
	d->nconfs = d->capconfs = 0;
}
