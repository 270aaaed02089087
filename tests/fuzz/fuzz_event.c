/*
 * fuzz_event.c: libFuzzer target for the event-string parser. Each input
 * is one event string; the parser must return either events or an error
 * whose column lies within the string (plus one, for "missing at the end")
 * and whose message is a terminated sentence, and describe must print any
 * events it returned, and the input read as a raw record of each tracepoint
 * event must decode within its bounds. Resolution runs against the fixture trees, with
 * libpfm4 forced to skx, so the run is the same on every machine and no
 * real sysfs is walked. Built and run by `make fuzz` and tests/slow/fuzz.sh
 * (clang -fsanitize=fuzzer,address,undefined).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfscript.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Explicit settings win, so the same binary can fuzz another tree. */
	setenv("PERFSCRIPT_SYSFS", "tests/fixtures/sysfs", 0);
	setenv("PERFSCRIPT_TRACEFS", "tests/fixtures/tracefs", 0);
	setenv("LIBPFM_FORCE_PMU", "skx", 0);
	sink = fopen("/dev/null", "w");
	return 0;
}

/* The input's bytes as a raw record of tracepoint tp: every field of its
 * format decodes or is refused, never read past the record. */
static void decode(const char *tp, const uint8_t *raw, size_t size)
{
	const struct ps_tp_format *f = tp ? ps_tp_format__get(tp, NULL) : NULL;

	for (size_t i = 0; i < ps_tp_format__count(f); i++) {
		const struct ps_tp_field *fl = ps_tp_format__field(f, i);
		size_t n = ps_tp_field__count(fl, raw, size), len;
		const void *p;
		int64_t v;

		for (size_t k = 0; k < n && k < 64; k++)
			ps_tp_field__int(fl, raw, size, k, &v);
		if (ps_tp_field__bytes(fl, raw, size, &p, &len) == 0 &&
		    ((const uint8_t *)p < raw || (const uint8_t *)p + len > raw + size))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ps_event_error err;
	struct ps_events *evs;
	char *s;

	if (size > 4096) /* longer strings only repeat shorter paths */
		return 0;
	if (!(s = malloc(size + 1)))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	evs = ps_events__parse(s, &err);
	if (evs) {
		for (size_t i = 0; i < ps_events__count(evs); i++) {
			double scale;
			const char *unit;
			const int *cpus;

			if (!ps_events__attr(evs, i) || !ps_events__name(evs, i) ||
			    ps_events__leader(evs, i) > i || ps_events__scale(evs, i, &scale, &unit) ||
			    ps_events__cpus(evs, i, &cpus) < 0)
				abort();
		}
		if (sink)
			ps_events__describe(evs, sink, size & 1);
		for (size_t i = 0; i < ps_events__count(evs); i++) {
			struct ps_probe_info pi;

			(void)ps_events__flags(evs, i);
			(void)ps_events__group_name(evs, i);
			if (ps_events__probe(evs, i, &pi) == 1 &&
			    (pi.kind < PS_PROBE_KPROBE || pi.kind > PS_PROBE_USDT))
				abort();
			decode(ps_events__tracepoint(evs, i), data, size);
		}
		ps_events__free(evs);
	} else if (err.column < 0 || (size_t)err.column > strlen(s) + 1 ||
		   !memchr(err.message, '\0', sizeof(err.message)) || !err.message[0] ||
		   !memchr(err.token, '\0', sizeof(err.token))) {
		abort();
	}
	free(s);
	return 0;
}
