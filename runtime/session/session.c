/*
 * session.c: the session's sampler and the hooks the counter core calls it
 * through, above both backends: it picks the one that serves each counter.
 * The public ps_session__new is here: a session is the core's counters on
 * a target plus this sampler, which the core then reaches only through
 * core/sampler_hooks.h. Each sampling counter gets a struct ps_sampled;
 * the perf ring backend gives every one of its fds a ring and maps its ids,
 * and the counter is then served by BPF or by the perf ring, as its event
 * string's bpf/nobpf term, its options (ps_session__set_bpf) or the
 * session's backend say; AUTO takes BPF only for counters that ask for
 * in-kernel work, and falls back to the perf ring, saying why once, when
 * BPF cannot load. The one delivery path is in sample/deliver.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/array.h"
#include "base/cpus.h"
#include "sample/sampler.h"

static bool wants_kernel_work(const struct ps_sample_conf *c)
{
	return c->configured && ((c->mode & (PS_BPF_AGGREGATE | PS_BPF_PYTHON)) || c->npids ||
				 c->tid || c->ncpus || c->priv != PS_PRIV_ANY || c->every > 1);
}

/* A syscall tracepoint whose samples carry user strings (openat's
 * filename): the BPF path reads them at the event, while the process and
 * its memory are there. */
static bool wants_strings(const struct ps_sampler *m, uint32_t slot)
{
	const struct ps_counter *k = ps_session__counter(m->s, slot);
	const struct ps_tp_format *f;

	if (ps_counter__attr(k)->type != PERF_TYPE_TRACEPOINT ||
	    !(ps_counter__attr(k)->sample_type & PERF_SAMPLE_RAW) ||
	    !ps_counter__tracepoint_name(k) ||
	    !(f = ps_tp_format__get(ps_counter__tracepoint_name(k), NULL)))
		return false;
	for (size_t i = 0; i < ps_tp_format__count(f); i++)
		if (ps_tp_format__field(f, i)->user_string)
			return true;
	return false;
}

enum ps_backend ps_sampler__choose(const struct ps_sampler *m, uint32_t slot, bool *named)
{
	const struct ps_sampled *c = ps_sampler__counter(m, slot);

	*named = true;
	if (c->term != PS_BACKEND_AUTO)
		return c->term;
	if (c->conf.configured && c->conf.backend != PS_BACKEND_AUTO)
		return c->conf.backend;
	if (m->backend != PS_BACKEND_AUTO)
		return m->backend;
	*named = false;
	/* a USDT marker's arguments in memory are read at the event there */
	return wants_kernel_work(&c->conf) || wants_strings(m, slot) ||
		       ps_counter__usdt_reads_memory(ps_session__counter(m->s, slot))
		   ? PS_BACKEND_BPF
		   : PS_BACKEND_PERF;
}

/* Give an attached counter the backend it should have now. A BPF program
 * that fails to load is an error when it was asked for by name; under AUTO
 * the perf ring serves the counter (its filters applied in user space) and
 * the first reason is kept for ps_session__bpf_fallback(). */
static int serve(struct ps_sampler *m, uint32_t slot, char *msg, size_t msglen)
{
	struct ps_sampled *c = ps_sampler__counter(m, slot);
	char why[sizeof(m->fallback) - 40]; /* room for the Python note */
	bool named;
	int err;

	if (ps_sampler__choose(m, slot, &named) != PS_BACKEND_BPF) {
		if (c->serving && c->serving != &ps_perf_backend)
			c->serving->detach(m, slot);
		c->serving = &ps_perf_backend;
		return 0;
	}
	err = ps_bpf_backend.attach(m, slot, named ? msg : why, named ? msglen : sizeof(why));
	if (!err) {
		struct ps_counter *k = ps_session__counter(m->s, slot);

		c->serving = &ps_bpf_backend;
		if (ps_bpf_backend.counts_hits(m, slot) && !ps_counter__handed(k)) {
			ps_perf_backend.detach(m, slot); /* its ids will name no fd */
			ps_counter__hand_over(m->s, k);
		}
		return 0;
	}
	if (named)
		return err;
	if (!m->fallback[0])
		snprintf(m->fallback, sizeof(m->fallback), "%s%s", why,
			 c->conf.mode & PS_BPF_PYTHON ? "; samples have no Python frames" : "");
	if (!c->serving)
		c->serving = &ps_perf_backend;
	return 0;
}

/* ---- the hooks of core/sampler_hooks.h ---- */

static int hook_prepare(struct ps_session *s, uint32_t slot, const struct ps_events *evs, size_t i)
{
	struct ps_counter *k = ps_session__counter(s, slot);
	struct ps_sampled *c = calloc(1, sizeof(*c));
	/* the event string's bpf/nobpf term, as the counter's flags keep it
	 * (the same for a counter made to sample later: evs NULL) */
	unsigned flags = ps_counter__flags(k);
	int bpf = flags & PS_EVENT_BPF ? 1 : flags & PS_EVENT_NOBPF ? -1 : 0;

	(void)evs;
	(void)i;
	if (!c)
		return -ENOMEM;
	c->term = bpf > 0 ? PS_BACKEND_BPF : bpf < 0 ? PS_BACKEND_PERF : PS_BACKEND_AUTO;
	ps_counter__set_sampled(k, c);
	if (ps_counter__attr(k)->sample_type & PERF_SAMPLE_STACK_USER)
		ps_session__sampler(s)->user_stacks =
		    true; /* rings mapped from now on are bigger */
	ps_perf_backend.prepare(ps_session__sampler(s), slot, ps_counter__attr_mut(k));
	return 0;
}

static int hook_will_open(struct ps_session *s, const char *name, const struct ps_position *pos,
			  int npos, char *msg, size_t msglen)
{
	return ps_perf_backend.will_open(ps_session__sampler(s), name, pos, npos, msg, msglen);
}

static int hook_fd_opened(struct ps_session *s, uint32_t slot, int fd, int cpu)
{
	return ps_perf_backend.fd_opened(ps_session__sampler(s), slot, fd, cpu);
}

static int hook_attach(struct ps_session *s, uint32_t slot, char *msg, size_t msglen)
{
	struct ps_sampler *m = ps_session__sampler(s);
	int err = ps_perf_backend.attach(m, slot, msg, msglen);

	if (!err && (err = serve(m, slot, msg, msglen)))
		ps_perf_backend.detach(m, slot);
	return err;
}

static void hook_switched(struct ps_session *s, uint32_t slot, bool on)
{
	struct ps_sampler *m = ps_session__sampler(s);
	struct ps_sampled *c = ps_sampler__counter(m, slot);

	if (c && c->serving && c->serving->switched)
		c->serving->switched(m, slot, on);
}

static int hook_read(struct ps_session *s, uint32_t slot, struct ps_value *v, bool reset)
{
	struct ps_sampler *m = ps_session__sampler(s);
	struct ps_sampled *c = ps_sampler__counter(m, slot);

	if (!c || !c->serving || !c->serving->count)
		return -ENODATA; /* handed over to a backend that is gone: cannot be */
	return c->serving->count(m, slot, v, reset);
}

static void hook_detach(struct ps_session *s, uint32_t slot)
{
	struct ps_sampler *m = ps_session__sampler(s);
	struct ps_sampled *c = ps_sampler__counter(m, slot);

	/* a program goes before the fds it hangs on; samples still in a ring
	 * then name no counter and are skipped */
	if (c->serving && c->serving != &ps_perf_backend)
		c->serving->detach(m, slot);
	c->serving = NULL;
	ps_perf_backend.detach(m, slot);
}

static void conf_free(struct ps_sample_conf *conf)
{
	free(conf->pids);
	free(conf->cpus);
	memset(conf, 0, sizeof(*conf));
}

static void hook_release(struct ps_session *s, uint32_t slot)
{
	struct ps_counter *k = ps_session__counter(s, slot);

	conf_free(&ps_counter__sampled(k)->conf);
	free(ps_counter__sampled(k));
	ps_counter__set_sampled(k, NULL);
}

static void hook_free(struct ps_session *s)
{
	struct ps_sampler *m = ps_session__sampler(s);

	ps_order__free(m);
	ps_bpf_backend.free(m);
	ps_perf_backend.free(m);
	free(m->watch);
	free(m->fds);
	free(m);
	ps_session__set_sampler(s, NULL, NULL);
}

static const struct ps_sampler_hooks hooks = {
    .prepare = hook_prepare,
    .will_open = hook_will_open,
    .fd_opened = hook_fd_opened,
    .attach = hook_attach,
    .switched = hook_switched,
    .read = hook_read,
    .detach = hook_detach,
    .release = hook_release,
    .free = hook_free,
};

/* ---- the public side: the session, its options, a counter's path ---- */

struct ps_session *ps_session__new(const struct ps_target_opts *opts)
{
	struct ps_session *s = ps_session__create(opts);
	struct ps_sampler *m;

	if (!s)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m) {
		ps_session__free(s);
		errno = ENOMEM;
		return NULL;
	}
	m->s = s;
	ps_session__set_sampler(s, m, &hooks);
	return s;
}

int ps_session__set_sample_ops(struct ps_session *s, const struct ps_sample_ops *ops)
{
	struct ps_sampler *m = s ? ps_session__sampler(s) : NULL;

	if (!m)
		return -EINVAL;
	memset(&m->ops, 0, sizeof(m->ops));
	if (!ops)
		return 0;
	if (ops->sz < offsetof(struct ps_sample_ops, ctx) + sizeof(ops->ctx))
		return -EINVAL;
	memcpy(&m->ops, ops, ops->sz < sizeof(*ops) ? ops->sz : sizeof(*ops));
	m->ops.sz = sizeof(*ops);
	return 0;
}

int ps_session__set_ring_pages(struct ps_session *s, size_t pages)
{
	if (!s || !ps_session__sampler(s) || pages == 0 || (pages & (pages - 1)) ||
	    pages > PS_RING_PAGES_MAX)
		return -EINVAL;
	ps_session__sampler(s)->ring_pages = pages;
	return 0;
}

size_t ps_session__ring_pages(const struct ps_session *s, bool *asked)
{
	if (asked)
		*asked = s && ps_session__sampler(s) && ps_session__sampler(s)->ring_pages;
	return s && ps_session__sampler(s) ? ps_sampler__ring_pages(ps_session__sampler(s)) : 0;
}

int ps_session__set_backend(struct ps_session *s, enum ps_backend b)
{
	if (!s || !ps_session__sampler(s) || b < PS_BACKEND_AUTO || b > PS_BACKEND_BPF)
		return -EINVAL;
	ps_session__sampler(s)->backend = b;
	return 0;
}

bool ps_session__is_sampling(const struct ps_session *s, ps_handle h)
{
	const struct ps_counter *c = ps_session__counter_of(s, h);

	return c && ps_counter__sampling(c);
}

/* Copy o into conf (arrays copied); 0 or -ENOMEM with conf unchanged. */
static int conf_set(struct ps_sample_conf *conf, const struct ps_bpf_opts *o)
{
	pid_t *pids = NULL;
	int *cpus = NULL;

	if ((o->npids && !(pids = malloc(o->npids * sizeof(*pids)))) ||
	    (o->ncpus && !(cpus = malloc(o->ncpus * sizeof(*cpus))))) {
		free(pids);
		return -ENOMEM;
	}
	/* copied before the old arrays go: a merge hands back conf's own */
	if (o->npids)
		memcpy(pids, o->pids, o->npids * sizeof(*pids));
	if (o->ncpus)
		memcpy(cpus, o->cpus, o->ncpus * sizeof(*cpus));
	conf_free(conf);
	*conf = (struct ps_sample_conf){
	    .configured = true,
	    .backend = o->backend,
	    .mode = o->mode ? o->mode : PS_BPF_FORWARD,
	    .pids = pids,
	    .npids = o->npids,
	    .tid = o->tid,
	    .cpus = cpus,
	    .ncpus = o->ncpus,
	    .priv = o->priv,
	    .every = o->every,
	    .keys = o->keys,
	    .entries = o->entries,
	};
	/* options structs start with sz: an older caller's has no field_* */
	if (o->sz >= offsetof(struct ps_bpf_opts, field_signed) + sizeof(o->field_signed)) {
		conf->field_offset = o->field_offset;
		conf->field_size = o->field_size;
		conf->field_signed = o->field_signed;
	}
	if (o->sz >= offsetof(struct ps_bpf_opts, offcpu_min_ns) + sizeof(o->offcpu_min_ns))
		conf->offcpu_min_ns = o->offcpu_min_ns;
	if (o->sz >= offsetof(struct ps_bpf_opts, usdt_arg) + sizeof(o->usdt_arg))
		conf->usdt_arg = o->usdt_arg;
	return 0;
}

int ps_session__set_bpf(struct ps_session *s, ps_handle h, const struct ps_bpf_opts *o, char *msg,
			size_t msglen)
{
	struct ps_counter *k = ps_session__counter_of(s, h);
	int err;

	if (msg && msglen)
		msg[0] = '\0';
	if (!k)
		return -PS_ERR_HANDLE;
	if (!o || o->sz < offsetof(struct ps_bpf_opts, entries) + sizeof(o->entries))
		return -EINVAL;
	if (!ps_counter__sampling(k) || !ps_counter__sampled(k)) {
		if (msg && msglen)
			snprintf(msg, msglen,
				 "counter '%s' does not sample: in-kernel handling "
				 "needs a period= or freq= term",
				 ps_counter__name(k));
		return -EINVAL;
	}
	for (size_t i = 0; i < o->ncpus; i++) {
		if (o->cpus[i] < 0 || o->cpus[i] >= PS_CPUS_MAX) {
			if (msg && msglen)
				snprintf(msg, msglen, "counter '%s': %d is not a CPU number",
					 ps_counter__name(k), o->cpus[i]);
			return -EINVAL;
		}
	}
	if (ps_counter__handed(k) && ps_counter__is_open(k)) {
		/* its perf events are gone: nothing else could count it now */
		if (msg && msglen)
			snprintf(
			    msg, msglen,
			    "counter '%s' is counted by its in-kernel aggregation alone "
			    "since it started: ask for samples and aggregations before it starts",
			    ps_counter__name(k));
		return -EBUSY;
	}
	err = conf_set(&ps_counter__sampled(k)->conf, o);
	ps_counter__sampled(k)->passed = 0;
	if (err || !ps_counter__is_open(k))
		return err;
	/* an open counter takes its new path now (a new program replaces the old) */
	return serve(ps_session__sampler(s), ps_session__slot_of(s, k), msg, msglen);
}

/* Whether m would configure the counter as c does now. */
static bool same_conf(const struct ps_sample_conf *c, const struct ps_bpf_opts *m)
{
	return c->backend == m->backend && c->mode == m->mode && c->npids == m->npids &&
	       (!m->npids || !memcmp(c->pids, m->pids, m->npids * sizeof(*m->pids))) &&
	       c->tid == m->tid && c->ncpus == m->ncpus &&
	       (!m->ncpus || !memcmp(c->cpus, m->cpus, m->ncpus * sizeof(*m->cpus))) &&
	       c->priv == m->priv && c->every == m->every && c->keys == m->keys &&
	       c->entries == m->entries && c->field_offset == m->field_offset &&
	       c->field_size == m->field_size && c->field_signed == m->field_signed &&
	       c->offcpu_min_ns == m->offcpu_min_ns && c->usdt_arg == m->usdt_arg;
}

int ps_session__merge_bpf(struct ps_session *s, ps_handle h, const struct ps_bpf_opts *o, char *msg,
			  size_t msglen)
{
	struct ps_counter *k = ps_session__counter_of(s, h);
	const struct ps_sample_conf *c =
	    k && ps_counter__sampled(k) ? &ps_counter__sampled(k)->conf : NULL;
	bool off = o && (o->mode & (PS_BPF_OFFCPU | PS_BPF_ONCPU)) &&
		   o->sz >= offsetof(struct ps_bpf_opts, offcpu_min_ns) + sizeof(o->offcpu_min_ns);
	bool field = o && (o->keys & PS_AGG_FIELD) &&
		     o->sz >= offsetof(struct ps_bpf_opts, field_signed) + sizeof(o->field_signed);
	bool arg = field && o->sz >= offsetof(struct ps_bpf_opts, usdt_arg) + sizeof(o->usdt_arg);
	struct ps_bpf_opts m;

	if (!c || !c->configured || !o ||
	    o->sz < offsetof(struct ps_bpf_opts, entries) + sizeof(o->entries))
		return ps_session__set_bpf(s, h, o, msg, msglen); /* nothing to merge with */
	m = (struct ps_bpf_opts){
	    .sz = sizeof(m),
	    .backend = o->backend ? o->backend : c->backend,
	    .mode = c->mode | o->mode,
	    .pids = o->npids ? o->pids : c->pids,
	    .npids = o->npids ? o->npids : c->npids,
	    .tid = o->tid ? o->tid : c->tid,
	    .cpus = o->ncpus ? o->cpus : c->cpus,
	    .ncpus = o->ncpus ? o->ncpus : c->ncpus,
	    .priv = o->priv ? o->priv : c->priv,
	    .every = o->every ? o->every : c->every,
	    .keys = o->keys ? o->keys : c->keys,
	    .entries = o->entries ? o->entries : c->entries,
	    .field_offset = field ? o->field_offset : c->field_offset,
	    .field_size = field ? o->field_size : c->field_size,
	    .field_signed = field ? o->field_signed : c->field_signed,
	    .offcpu_min_ns = off ? o->offcpu_min_ns : c->offcpu_min_ns,
	    .usdt_arg = arg ? o->usdt_arg : c->usdt_arg,
	};
	if (same_conf(c, &m))
		return 0; /* the same configuration: no program loaded again */
	return ps_session__set_bpf(s, h, &m, msg, msglen);
}

enum ps_backend ps_session__backend(const struct ps_session *s, ps_handle h)
{
	const struct ps_counter *k = ps_session__counter_of(s, h);

	return k && ps_counter__sampled(k) && ps_counter__sampled(k)->serving == &ps_bpf_backend
		   ? PS_BACKEND_BPF
		   : PS_BACKEND_PERF;
}

const char *ps_session__bpf_fallback(const struct ps_session *s)
{
	return s && ps_session__sampler(s) ? ps_session__sampler(s)->fallback : "";
}
