/*
 * stack_glue.c: the kernel frames a stack does not show. A tracepoint's
 * kernel stack starts inside the tracing machinery (__traceiter_NAME, and
 * for a BPF program __bpf_trace_NAME and bpf_trace_run), how many frames
 * of it depending on the kernel and the path: the stack of a sched_switch
 * sample on the perf ring starts at __traceiter_sched_switch, a BPF
 * program's deeper. Both the sample's stacks (lua/sample_stack.c) and the
 * aggregates' (lua/aggregate.c) drop them, so that an off-CPU stack ends at
 * __schedule on every path, as bcc's does.
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
