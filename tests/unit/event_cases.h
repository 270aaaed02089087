/*
 * event_cases.h: the case-table machinery the event-parser unit tests share
 * (test_event.c, test_event_pmu.c, test_event_pfm.c): a valid case names the
 * attr fields one event of a string must have (zero defaults for what a row
 * leaves out), an invalid case the error code, column, suggestion and
 * message. check_valid/check_invalid print one TAP line per case.
 */
#ifndef PS_TEST_EVENT_CASES_H
#define PS_TEST_EVENT_CASES_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfscript.h"
#include "tap.h"

/* The case tables lean on zero defaults for the fields a row leaves out. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define HW PERF_TYPE_HARDWARE
#define SW PERF_TYPE_SOFTWARE
#define TP PERF_TYPE_TRACEPOINT
#define HC PERF_TYPE_HW_CACHE
#define RAW PERF_TYPE_RAW

/* flags */
#define XU (1u << 0)
#define XK (1u << 1)
#define XH (1u << 2)
#define XHOST (1u << 3)
#define XGUEST (1u << 4)
#define XIDLE (1u << 5)
#define PIN (1u << 6)
#define EXCL (1u << 7)
#define INH (1u << 8)
#define FREQ (1u << 9)
#define MEMBER (1u << 10) /* not a leader: disabled=0, leader given */

#define RF (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
#define RFG (RF | PERF_FORMAT_GROUP | PERF_FORMAT_ID)
#define ST                                                                             \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_PERIOD)
#define RD PERF_SAMPLE_READ
#define CC(t, op, res) ((uint64_t)(t) | (uint64_t)(op) << 8 | (uint64_t)(res) << 16)
#define L1D PERF_COUNT_HW_CACHE_L1D
#define L1I PERF_COUNT_HW_CACHE_L1I
#define LL PERF_COUNT_HW_CACHE_LL
#define DTLB PERF_COUNT_HW_CACHE_DTLB
#define ITLB PERF_COUNT_HW_CACHE_ITLB
#define BPU PERF_COUNT_HW_CACHE_BPU
#define NODE PERF_COUNT_HW_CACHE_NODE
#define RD_ PERF_COUNT_HW_CACHE_OP_READ
#define WR_ PERF_COUNT_HW_CACHE_OP_WRITE
#define PF_ PERF_COUNT_HW_CACHE_OP_PREFETCH
#define ACC PERF_COUNT_HW_CACHE_RESULT_ACCESS
#define MISS PERF_COUNT_HW_CACHE_RESULT_MISS

struct vcase {
	const char *spec;
	uint32_t type;
	uint64_t config;
	unsigned flags;
	unsigned precise;
	uint64_t period;   /* sample_period, or sample_freq with FREQ */
	uint64_t rf;       /* read_format; 0 means RF */
	uint64_t st;       /* sample_type */
	size_t idx;        /* the event checked */
	size_t n;          /* events expected; 0 means 1 */
	size_t leader;     /* with MEMBER, else idx */
	const char *name;  /* display name; NULL means spec */
	int cpu;           /* cpu= term + 1; 0 means none (-1) */
	uint64_t config1, config2; /* for a breakpoint: bp_addr, bp_len */
	unsigned bp_type;
	double scale;      /* 0 means 1.0 */
	const char *unit;  /* NULL means "" */
	const char *cpus;  /* the PMU's cpumask as "0,18"; NULL means none */
};

static void check_valid(const struct vcase *c)
{
	struct ps_event_error err;
	struct ps_events *evs = ps_events__parse(c->spec, &err);
	const struct perf_event_attr *a;
	char why[512] = "";
	size_t n = c->n ? c->n : 1, leader = c->flags & MEMBER ? c->leader : c->idx;
	uint64_t rf = c->rf ? c->rf : RF;
	const char *name = c->name ? c->name : c->spec;

	if (!evs) {
		tap_ok(0, "valid '%s'", c->spec);
		tap_diag("  error: %s", err.message);
		return;
	}
	a = ps_events__attr(evs, c->idx);
#define CHECK(what, got, want)                                                         \
	do {                                                                           \
		unsigned long long g_ = (got), w_ = (want);                            \
		if (g_ != w_)                                                          \
			snprintf(why + strlen(why), sizeof(why) - strlen(why),         \
				 " %s=%llu(want %llu)", what, g_, w_);                 \
	} while (0)
	CHECK("count", ps_events__count(evs), n);
	if (a) {
		CHECK("size", a->size, sizeof(*a));
		CHECK("type", a->type, c->type);
		CHECK("config", a->config, c->config);
		CHECK("config1", a->config1, c->config1);
		CHECK("config2", a->config2, c->config2);
		CHECK("exclude_user", a->exclude_user, !!(c->flags & XU));
		CHECK("exclude_kernel", a->exclude_kernel, !!(c->flags & XK));
		CHECK("exclude_hv", a->exclude_hv, !!(c->flags & XH));
		CHECK("exclude_host", a->exclude_host, !!(c->flags & XHOST));
		CHECK("exclude_guest", a->exclude_guest, !!(c->flags & XGUEST));
		CHECK("exclude_idle", a->exclude_idle, !!(c->flags & XIDLE));
		CHECK("pinned", a->pinned, !!(c->flags & PIN));
		CHECK("exclusive", a->exclusive, !!(c->flags & EXCL));
		CHECK("inherit", a->inherit, !!(c->flags & INH));
		CHECK("freq", a->freq, !!(c->flags & FREQ));
		CHECK("precise_ip", a->precise_ip, c->precise);
		CHECK("sample_period", a->sample_period, c->period);
		CHECK("read_format", a->read_format, rf);
		CHECK("sample_type", a->sample_type, c->st);
		CHECK("disabled", a->disabled, !(c->flags & MEMBER));
		CHECK("wakeup_events", a->wakeup_events, 0);
		CHECK("bp_type", a->bp_type, c->bp_type);
	} else {
		strcat(why, " no such event");
	}
	CHECK("leader", ps_events__leader(evs, c->idx), leader);
	CHECK("cpu", (long long)ps_events__cpu(evs, c->idx), (long long)c->cpu - 1);
#undef CHECK
	{
		double scale = 0;
		const char *unit = NULL;
		const int *cpus = NULL;
		char list[128] = "";
		int nc = ps_events__cpus(evs, c->idx, &cpus);

		ps_events__scale(evs, c->idx, &scale, &unit);
		if (scale != (c->scale ? c->scale : 1.0) || strcmp(unit, c->unit ? c->unit : ""))
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
				 " scale=%g unit='%s'(want %g '%s')", scale, unit,
				 c->scale ? c->scale : 1.0, c->unit ? c->unit : "");
		for (int k = 0; k < nc && strlen(list) < sizeof(list) - 16; k++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), k ? ",%d" : "%d",
				 cpus[k]);
		if (strcmp(list, c->cpus ? c->cpus : ""))
			snprintf(why + strlen(why), sizeof(why) - strlen(why), " cpus='%s'(want '%s')",
				 list, c->cpus ? c->cpus : "");
	}
	if (!ps_events__name(evs, c->idx) || strcmp(ps_events__name(evs, c->idx), name) != 0)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), " name='%s'(want '%s')",
			 ps_events__name(evs, c->idx) ? ps_events__name(evs, c->idx) : "(null)",
			 name);
	if (!tap_ok(why[0] == '\0', "valid '%s' [%zu]", c->spec, c->idx))
		tap_diag(" %s", why);
	ps_events__free(evs);
}

struct icase {
	const char *spec;
	int code;
	int column;
	const char *suggestion; /* NULL: not checked; "" means none */
	const char *message;    /* NULL: not checked */
};

static void check_invalid(const struct icase *c)
{
	struct ps_event_error err;
	struct ps_events *evs;
	char why[512] = "";

	memset(&err, 0xa5, sizeof(err));
	errno = 0;
	evs = ps_events__parse(c->spec, &err);
	if (evs) {
		tap_ok(0, "invalid '%s'", c->spec);
		tap_diag("  parsed into %zu events", ps_events__count(evs));
		ps_events__free(evs);
		return;
	}
	if (errno != EINVAL)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), " errno=%d", errno);
	if (err.code != c->code)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), " code=%d(want %d)",
			 err.code, c->code);
	if (err.column != c->column)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), " column=%d(want %d)",
			 err.column, c->column);
	if (c->suggestion && strcmp(err.suggestion, c->suggestion) != 0)
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 " suggestion='%s'(want '%s')", err.suggestion, c->suggestion);
	if (c->message && strcmp(err.message, c->message) != 0)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), " message differs");
	if (!tap_ok(why[0] == '\0', "invalid '%s'", c->spec))
		tap_diag(" %s: %s", why, err.message);
}

/* The --describe output of spec (text or JSON), malloc'd; NULL when it
 * does not parse. */
__attribute__((unused)) static char *describe(const char *spec, bool json)
{
	struct ps_events *evs = ps_events__parse(spec, NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!evs || !(f = open_memstream(&buf, &len))) {
		ps_events__free(evs);
		return NULL;
	}
	ps_events__describe(evs, f, json);
	fclose(f);
	ps_events__free(evs);
	return buf;
}

#endif /* PS_TEST_EVENT_CASES_H */
