/*
 * offcpu.c: the reader's side of off-CPU and wall time (ps_offcpu.bpf.h).
 * The programs see a thread at its switches; ps_flush, never attached, is
 * run from here through BPF_PROG_TEST_RUN before an aggregate is read, and
 * books the waits and slices still going on up to now.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample/bpf/internal.h"
#include "ps_sample.skel.h"

void ps_bpf__offcpu_flush(const struct ps_bpf_counter *b)
{
	__u64 none = 0;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &none, .ctx_size_in = sizeof(none));

	if (b->skel->rodata->cfg_offcpu && bpf_program__fd(b->skel->progs.ps_flush) >= 0)
		bpf_prog_test_run_opts(bpf_program__fd(b->skel->progs.ps_flush), &opts);
}
