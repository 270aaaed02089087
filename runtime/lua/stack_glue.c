/*
 * stack_glue.c: the ends of a stack. At the leaf, the kernel frames a stack
 * does not show: a tracepoint's
 * kernel stack starts inside the tracing machinery (__traceiter_NAME, and
 * for a BPF program __bpf_trace_NAME and bpf_trace_run), how many frames
 * of it depending on the kernel and the path: the stack of a sched_switch
 * sample on the perf ring starts at __traceiter_sched_switch, a BPF
 * program's deeper. Both the sample's stacks (lua/sample_stack.c) and the
 * aggregates' (lua/aggregate.c) drop them, so that an off-CPU stack ends at
 * __schedule on every path, as bcc's does. At the root, a stack cut short
 * by its depth limit (max-stack=, 127 by default, the kernel's own for a
 * frame-pointer walk) says so, as "[truncated]", so that it never looks
 * like a root of its own.
 */
#include <string.h>

#include "lua/internal.h"

bool ps_lua_stack__glue(struct ps_script *sc, uint64_t ip)
{
	static const char *const glue[] = {"__traceiter_", "__bpf_trace_", "bpf_trace_run",
					   "perf_trace_"};
	struct ps_symbols *syms = ps_lua_sample_object__symbols(sc);
	char name[256];

	if (!syms || ps_symbols__resolve(syms, 0, ip, true, name, sizeof(name), NULL) < 0)
		return false;
	for (size_t i = 0; i < sizeof(glue) / sizeof(*glue); i++)
		if (!strncmp(name, glue[i], strlen(glue[i])))
			return true;
	return false;
}

int ps_lua_stack__drop_glue(struct ps_script *sc, const struct ps_sample *s, struct ps_lua_frame *f,
			    int n)
{
	while ((s->sample_type & PERF_SAMPLE_RAW) && n > 1 && f[0].kernel && f[1].kernel &&
	       ps_lua_stack__glue(sc, f[0].addr))
		memmove(f, f + 1, (size_t)--n * sizeof(*f));
	return n;
}

bool ps_lua_stack__cut(struct ps_script *sc, const struct ps_sample *s)
{
	const struct perf_event_attr *a = ps_session__attr(sc->session, s->handle);
	size_t max = ps_session__max_stack(sc->session, s->handle), n = 0;
	const uint64_t *ips;

	if (s->sample_type & PERF_SAMPLE_STACK_USER) { /* unwound here, this deep */
		max = max ? max : 127;
		max = max < PS_LUA_MAX_USTACK ? max : PS_LUA_MAX_USTACK;
		return (size_t)ps_lua_sample_object__unwound(sc, s, &ips) >= max;
	}
	if (!(s->sample_type & PERF_SAMPLE_CALLCHAIN) || !a)
		return false;
	for (uint64_t i = 0; i < s->nr_ips; i++) /* the kernel's walk, both sides */
		n += s->ips[i] < (uint64_t)PERF_CONTEXT_MAX;
	return n >= (a->sample_max_stack ? a->sample_max_stack : 127u);
}
