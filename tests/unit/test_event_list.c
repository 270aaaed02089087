/*
 * test_event_list.c: unit tests of the event listing (runtime/event/list.c)
 * against the fixture trees: the groups come in order, globs filter, the
 * JSON form is well-formed enough to count, and every name listed from the
 * symbolic tables, tracefs and sysfs parses as written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfscript.h"
#include "tap.h"

static const struct ps_event_list_entry *find(const struct ps_event_list *l, const char *name)
{
	for (size_t i = 0; i < ps_event_list__count(l); i++)
		if (!strcmp(ps_event_list__entry(l, i)->name, name))
			return ps_event_list__entry(l, i);
	return NULL;
}

/* A probe form as -l lists it (uprobe:PATH:SYMBOL[+OFF]) with its
 * placeholders filled in, so that it can be parsed as a user would write it. */
static void instantiate(const char *form, char *out, size_t size)
{
	static const char *const fill[][2] = {
	    {"[+OFF]", "+4"},	{"0xADDR", "0x1000"}, {"PATH", "/bin/sh"},
	    {"SYMBOL", "main"}, {"PROVIDER", "libc"}, {"NAME", "setjmp"},
	};
	size_t o = 0;

	while (*form && o + 1 < size) {
		size_t k = 0;

		while (k < sizeof(fill) / sizeof(fill[0]) &&
		       strncmp(form, fill[k][0], strlen(fill[k][0])))
			k++;
		if (k == sizeof(fill) / sizeof(fill[0])) {
			out[o++] = *form++;
			continue;
		}
		o += (size_t)snprintf(out + o, size - o, "%s", fill[k][1]);
		form += strlen(fill[k][0]);
	}
	out[o < size ? o : size - 1] = 0;
}

int main(void)
{
	struct ps_event_list *l;
	const struct ps_event_list_entry *e;
	size_t unparsed = 0, checked = 0, n;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	setenv("PERFSCRIPT_TRACEFS", "tests/fixtures/tracefs", 1);
	setenv("PERFSCRIPT_SYSFS", "tests/fixtures/sysfs", 1);
	setenv("LIBPFM_FORCE_PMU", "skx", 1);
	l = ps_event_list__new(NULL);
	tap_ok(l && ps_event_list__count(l) > 100, "the full list has %zu names",
	       ps_event_list__count(l));
	e = find(l, "cycles");
	tap_ok(!e && find(l, "cpu-cycles") && !strcmp(find(l, "cpu-cycles")->group, "hardware"),
	       "hardware names are listed by their canonical name");
	e = find(l, "L1-dcache-load-misses");
	tap_ok(e && !strcmp(e->group, "cache") && e->supported != -1,
	       "cache events are listed and probed against the kernel");
	e = find(l, "task-clock");
	tap_ok(e && !strcmp(e->group, "software") && e->desc[0],
	       "software events have descriptions");
	e = find(l, "sched:sched_switch");
	tap_ok(e && !strcmp(e->group, "tracepoint"), "tracepoints come from tracefs");
	tap_ok(find(l, "ftrace:function") && !find(l, "ftrace:bprint"),
	       "a tracefs entry without an id (ftrace:bprint) is not listed");
	e = find(l, "skx::INST_RETIRED:ANY_P");
	tap_ok(e && e->supported != -1 &&
		   e->supported == find(l, "skx::INST_RETIRED:ALL")->supported,
	       "libpfm4 names are checked against the kernel, once per PMU (supported=%d)",
	       e ? e->supported : -2);
	e = find(l, "uncore_imc_0/cas_count_read/");
	tap_ok(e && !strcmp(e->group, "pmu/uncore_imc_0") && strstr(e->desc, "MiB"),
	       "sysfs aliases with their terms, scale and unit");
	e = find(l, "skx::INST_RETIRED:ANY_P");
	tap_ok(e && !strcmp(e->group, "libpfm4/skx") && e->desc[0],
	       "libpfm4 unit masks, described");
	tap_ok(!strcmp(ps_event_list__entry(l, 0)->group, "hardware") &&
		   !ps_event_list__entry(l, ps_event_list__count(l)),
	       "hardware first; out-of-range entry is NULL");
	for (size_t i = 0; i < ps_event_list__count(l); i++) {
		struct ps_events *evs;
		char name[256];

		e = ps_event_list__entry(l, i);
		checked++;
		if (!strcmp(e->group, "pmu/kprobe") || !strcmp(e->group, "pmu/uprobe"))
			instantiate(e->name, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "%s", e->name);
		evs = ps_events__parse(name, NULL);
		if (!evs && unparsed++ < 5)
			tap_diag("  does not parse: %s (%s)", e->name, e->group);
		ps_events__free(evs);
	}
	tap_ok(unparsed == 0, "all %zu listed names parse as written", checked);
	f = open_memstream(&buf, &len);
	ps_event_list__print(l, f, true);
	fclose(f);
	n = 0;
	for (char *p = buf; p && (p = strstr(p, "\"group\": ")); p++)
		n++;
	tap_ok(buf && buf[0] == '[' && n == ps_event_list__count(l), "JSON: one object per name");
	free(buf);
	ps_event_list__free(l);

	l = ps_event_list__new("sched:*");
	tap_ok(l && ps_event_list__count(l) == 3, "glob 'sched:*' keeps the 3 sched tracepoints");
	ps_event_list__free(l);
	l = ps_event_list__new("MEM-LOADS");
	tap_ok(l && find(l, "cpu/mem-loads/") && !find(l, "cycles"),
	       "a word without wildcards matches as a case-insensitive substring");
	ps_event_list__free(l);
	l = ps_event_list__new("software");
	tap_ok(l && find(l, "page-faults") && !find(l, "cpu-cycles"),
	       "a group name selects the group");
	ps_event_list__free(l);
	l = ps_event_list__new("zzzz-no-such");
	tap_ok(l && ps_event_list__count(l) == 0, "a glob matching nothing gives an empty list");
	ps_event_list__free(l);
	ps_event_list__free(NULL);
	return tap_done();
}
