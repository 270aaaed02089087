/*
 * region_report.c: the event set of code regions and their report. The set
 * is chosen once per process (ps_regions__init, or the first begin: the
 * spec, else $PERFSCRIPT_EVENTS, else task-clock), so an instrumented
 * program changes events without a recompile. At exit the regions of every
 * thread are printed as $PERFSCRIPT_REPORT says (table, csv, json or none;
 * table by default) to $PERFSCRIPT_REPORT_FILE or stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/region.h"

static void report_at_exit(void)
{
	const char *fmt = getenv("PERFSCRIPT_REPORT"), *path = getenv("PERFSCRIPT_REPORT_FILE");
	FILE *out = stderr;

	if (!ps_regions_g.threads || (fmt && !strcmp(fmt, "none")))
		return;
	if (path && *path && !(out = fopen(path, "w"))) {
		fprintf(stderr, "perfscript: cannot write the region report to %s: %s\n", path,
			strerror(errno));
		return;
	}
	if (ps_regions__report(out, fmt && *fmt ? fmt : "table") < 0)
		fprintf(stderr,
			"perfscript: PERFSCRIPT_REPORT='%s': want table, csv, json or none\n", fmt);
	if (out != stderr)
		fclose(out);
	else
		fflush(out);
}

int ps_regions__init(const char *spec, char *msg, size_t msglen)
{
	struct ps_regions_global *g = &ps_regions_g;
	struct ps_event_error e;
	struct ps_events *evs;
	size_t len;
	char *buf = ps_region__msgbuf(&len);
	int err = 0;

	if (!spec || !*spec)
		spec = getenv("PERFSCRIPT_EVENTS");
	if (!spec || !*spec)
		spec = "task-clock";
	pthread_mutex_lock(&g->lock);
	if (g->evs) {
		if (strcmp(spec, ps_events__spec(g->evs))) {
			snprintf(buf, len, "regions already count '%s' (one event set per process)",
				 ps_events__spec(g->evs));
			err = -PS_ERR_STATE;
		}
		goto unlock;
	}
	if (!(evs = ps_events__parse(spec, &e))) {
		snprintf(buf, len, "%s", e.message);
		err = -e.code;
		goto unlock;
	}
	if (ps_events__count(evs) > PS_REGION_MAX_EVENTS) {
		snprintf(buf, len, "regions count at most %d events ('%s' has %zu)",
			 PS_REGION_MAX_EVENTS, spec, ps_events__count(evs));
		ps_events__free(evs);
		err = -PS_ERR_LIMIT;
		goto unlock;
	}
	g->evs = evs;
	g->n = ps_events__count(evs);
	atexit(report_at_exit);
unlock:
	pthread_mutex_unlock(&g->lock);
	if (!err)
		err = ps_region__open_self();
	if (err && msg && msglen)
		snprintf(msg, msglen, "%s", buf);
	return err;
}

size_t ps_regions__events(const char **names, size_t max)
{
	struct ps_regions_global *g = &ps_regions_g;

	for (size_t i = 0; i < g->n && i < max; i++)
		names[i] = ps_events__name(g->evs, i);
	return g->n;
}

/* A CSV field, quoted when it holds a separator, a quote or a newline. */
static void csv(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++)
		fputs(*s == '"' ? "\"\"" : (char[]){*s, 0}, out);
	fputc('"', out);
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* A table column: as wide as its event's name, at least 20. */
static int col(size_t i)
{
	size_t n = strlen(ps_events__name(ps_regions_g.evs, i));

	return n > 20 ? (int)n : 20;
}

static void header(FILE *out, int kind, size_t width)
{
	struct ps_regions_global *g = &ps_regions_g;

	if (kind == 2) {
		fputs("{\"events\":[", out);
		for (size_t i = 0; i < g->n; i++) {
			fputs(i ? "," : "", out);
			json_str(out, ps_events__name(g->evs, i));
		}
		fputs("],\"regions\":[", out);
		return;
	}
	if (kind == 1)
		fputs("region,tid,calls", out);
	else
		fprintf(out, "%-*s %8s %10s", (int)width, "region", "tid", "calls");
	for (size_t i = 0; i < g->n; i++) {
		if (kind == 1) {
			fputc(',', out);
			csv(out, ps_events__name(g->evs, i));
		} else {
			fprintf(out, " %*s", col(i), ps_events__name(g->evs, i));
		}
	}
	fputc('\n', out);
}

static void row(FILE *out, int kind, size_t width, const struct ps_region_thread *t,
		const struct ps_region *r, bool first)
{
	struct ps_regions_global *g = &ps_regions_g;

	if (kind == 2) {
		fputs(first ? "\n{\"region\":" : ",\n{\"region\":", out);
		json_str(out, r->name);
		fprintf(out, ",\"tid\":%d,\"calls\":%llu,\"values\":{", (int)t->tid,
			(unsigned long long)ps_region__get(&r->calls));
		for (size_t i = 0; i < g->n; i++) {
			fputs(i ? "," : "", out);
			json_str(out, ps_events__name(g->evs, i));
			fprintf(out, ":%llu", (unsigned long long)ps_region__get(&r->sum[i]));
		}
		fputs("}}", out);
		return;
	}
	if (kind == 1) {
		csv(out, r->name);
		fprintf(out, ",%d,%llu", (int)t->tid,
			(unsigned long long)ps_region__get(&r->calls));
	} else {
		fprintf(out, "%-*s %8d %10llu", (int)width, r->name, (int)t->tid,
			(unsigned long long)ps_region__get(&r->calls));
	}
	for (size_t i = 0; i < g->n; i++)
		if (kind == 1)
			fprintf(out, ",%llu", (unsigned long long)ps_region__get(&r->sum[i]));
		else
			fprintf(out, " %*llu", col(i),
				(unsigned long long)ps_region__get(&r->sum[i]));
	fputc('\n', out);
}

int ps_regions__report(FILE *out, const char *format)
{
	struct ps_regions_global *g = &ps_regions_g;
	int kind = !format || !strcmp(format, "table") ? 0
		   : !strcmp(format, "csv")	       ? 1
		   : !strcmp(format, "json")	       ? 2
						       : -1;
	size_t width = 6;
	bool first = true;

	if (kind < 0 || !out)
		return -EINVAL;
	if (!g->evs)
		return 0;
	pthread_mutex_lock(&g->lock);
	for (const struct ps_region_thread *t = g->threads; t; t = t->next)
		for (size_t j = 0; j < t->nregions; j++)
			if (strlen(t->regions[j]->name) > width)
				width = strlen(t->regions[j]->name);
	header(out, kind, width);
	for (const struct ps_region_thread *t = g->threads; t; t = t->next) {
		for (size_t j = 0; j < t->nregions; j++) {
			row(out, kind, width, t, t->regions[j], first);
			first = false;
		}
	}
	if (kind == 2)
		fputs("\n]}\n", out);
	pthread_mutex_unlock(&g->lock);
	return 0;
}
