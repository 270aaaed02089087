/*
 * describe.c: ps_events__describe, the stable, machine-comparable
 * account of what a parsed event string will ask the kernel for (behind
 * `perfscript --describe` and the tests). Each event prints its name, its
 * leader's index, and the perf_event_attr fields it sets, named as in the
 * kernel struct. type and config are always printed (and for a breakpoint
 * bp_type, bp_addr and bp_len in place of config1/config2, with bp_symbol
 * "NAME+0xOFF" after bp_addr when it was written mem:SYMBOL); every other
 * field only when non-zero; a sysfs event's scale and unit, and its PMU's
 * cpumask, follow as scale=, unit= and cpus= (a string in JSON). Text form: one "field=value" per
 * line, config* and the read_format/sample_type bit masks in 0x hex, the rest decimal, a blank line
 * between events. JSON form: an array of one object per event with the same
 * keys, every value a JSON number except name.
 */
#include <errno.h>
#include <string.h>

#include "event/event.h"

struct field {
	const char *key;
	uint64_t value;
	bool hex;
};

#define MAX_FIELDS 40

/* The fields of one event, in output order. */
static size_t collect(const struct ps_event *ev, struct field *f)
{
	const struct perf_event_attr *a = &ev->attr;
	size_t n = 0;

#define ALWAYS(k, v, h) (f[n++] = (struct field){k, (uint64_t)(v), h})
#define NONZERO(k, v, h)                                                                           \
	do {                                                                                       \
		if (v)                                                                             \
			f[n++] = (struct field){k, (uint64_t)(v), h};                              \
	} while (0)
	ALWAYS("leader", ev->leader, false);
	if (ev->cpu >= 0)
		ALWAYS("cpu", ev->cpu, false);
	ALWAYS("type", a->type, false);
	ALWAYS("config", a->config, true);
	if (a->type == PERF_TYPE_BREAKPOINT) {
		/* bp_addr and bp_len share their words with config1 and config2. */
		ALWAYS("bp_type", a->bp_type, false);
		ALWAYS("bp_addr", a->bp_addr, true);
		ALWAYS("bp_len", a->bp_len, false);
	} else {
		NONZERO("config1", a->config1, true);
		NONZERO("config2", a->config2, true);
	}
	NONZERO(a->freq ? "sample_freq" : "sample_period", a->sample_period, false);
	NONZERO("freq", a->freq, false);
	NONZERO("exclude_user", a->exclude_user, false);
	NONZERO("exclude_kernel", a->exclude_kernel, false);
	NONZERO("exclude_hv", a->exclude_hv, false);
	NONZERO("exclude_host", a->exclude_host, false);
	NONZERO("exclude_guest", a->exclude_guest, false);
	NONZERO("exclude_idle", a->exclude_idle, false);
	NONZERO("precise_ip", a->precise_ip, false);
	NONZERO("pinned", a->pinned, false);
	NONZERO("exclusive", a->exclusive, false);
	NONZERO("inherit", a->inherit, false);
	NONZERO("disabled", a->disabled, false);
	NONZERO("read_format", a->read_format, true);
	NONZERO("sample_type", a->sample_type, true);
	NONZERO("sample_max_stack", a->sample_max_stack, false);
	NONZERO("exclude_callchain_user", a->exclude_callchain_user, false);
	NONZERO("sample_regs_user", a->sample_regs_user, true);
	NONZERO("sample_stack_user", a->sample_stack_user, false);
	NONZERO("aux_output", a->aux_output, false);
	NONZERO("aux_sample_size", a->aux_sample_size, false);
#undef ALWAYS
#undef NONZERO
	return n;
}

/* scale=, unit= and cpus=, which are not attr fields but what the counting
 * layer needs to know about a sysfs event. */
static void extras(const struct ps_event *ev, FILE *out, bool json)
{
	if (ev->scale > 0) {
		fprintf(out, json ? ", \"scale\": %.17g" : "scale=%.17g\n", ev->scale);
		if (json) {
			fputs(", \"unit\": ", out);
			ps_ev__json_string(out, ev->unit ? ev->unit : "");
		} else {
			fprintf(out, "unit=%s\n", ev->unit ? ev->unit : "");
		}
	}
	if (ev->ncpus) {
		fputs(json ? ", \"cpus\": \"" : "cpus=", out);
		for (size_t c = 0; c < ev->ncpus; c++)
			fprintf(out, c ? ",%d" : "%d", ev->cpus[c]);
		fputs(json ? "\"" : "\n", out);
	}
}

static void str_field(FILE *out, bool json, const char *key, const char *val)
{
	if (json) {
		fprintf(out, ", \"%s\": ", key);
		ps_ev__json_string(out, val);
	} else {
		fprintf(out, "%s=%s\n", key, val);
	}
}

/* What is not an attr field but changes what the session does: the
 * group's name, the flags, metric-id=, and a probe's target, which the
 * session resolves into config1/config2 when it opens the counter. */
static void more(const struct ps_event *ev, FILE *out, bool json)
{
	static const char *const kind[] = {"",	     "kprobe",	  "kretprobe",
					   "uprobe", "uretprobe", "usdt"};
	/* PS_EVENT_SAMPLE_EVERY is left out: it follows from the type */
	static const char *const flag[] = {"no-inherit", "precise-max", "weak-group", "percore"};
	const struct ps_probe *pr = ev->probe;
	char buf[640] = "";

	if (ev->group_name)
		str_field(out, json, "group", ev->group_name);
	for (size_t i = 0; i < sizeof(flag) / sizeof(flag[0]); i++)
		if (ev->flags & (1u << i))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
				 buf[0] ? "," : "", flag[i]);
	if (buf[0])
		str_field(out, json, "flags", buf);
	if (ev->metric_id)
		str_field(out, json, "metric_id", ev->metric_id);
	if (!pr)
		return;
	str_field(out, json, "probe", kind[pr->kind]);
	if (pr->path)
		str_field(out, json, "probe_path", pr->path);
	if (pr->provider) {
		snprintf(buf, sizeof(buf), "%s:%s", pr->provider, pr->name);
		str_field(out, json, "probe_usdt", buf);
	} else if (pr->symbol) {
		snprintf(buf, sizeof(buf), "%s+0x%llx", pr->symbol, (unsigned long long)pr->offset);
		str_field(out, json, "probe_symbol", buf);
	} else {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)pr->offset);
		str_field(out, json, "probe_addr", buf);
	}
}

/* bp_symbol=, after bp_addr: the name the session will look up. */
static void bp_symbol(const struct ps_event *ev, FILE *out, bool json)
{
	char buf[320];

	snprintf(buf, sizeof(buf), "%s+0x%llx", ev->bp_symbol, (unsigned long long)ev->bp_offset);
	if (json) {
		fputs(", \"bp_symbol\": ", out);
		ps_ev__json_string(out, buf);
	} else {
		fprintf(out, "bp_symbol=%s\n", buf);
	}
}

int ps_events__describe(const struct ps_events *evs, FILE *out, bool json)
{
	struct field f[MAX_FIELDS];

	if (!evs || !out)
		return -EINVAL;
	if (json)
		fputs("[\n", out);
	for (size_t i = 0; i < evs->n; i++) {
		size_t n = collect(&evs->ev[i], f);

		if (json) {
			fputs("  {\"name\": ", out);
			ps_ev__json_string(out, evs->ev[i].name);
			for (size_t j = 0; j < n; j++) {
				fprintf(out, ", \"%s\": %llu", f[j].key,
					(unsigned long long)f[j].value);
				if (evs->ev[i].bp_symbol && !strcmp(f[j].key, "bp_addr"))
					bp_symbol(&evs->ev[i], out, true);
			}
			extras(&evs->ev[i], out, true);
			more(&evs->ev[i], out, true);
			fputs(i + 1 < evs->n ? "},\n" : "}\n", out);
			continue;
		}
		if (i > 0)
			fputc('\n', out);
		fprintf(out, "name=%s\n", evs->ev[i].name);
		for (size_t j = 0; j < n; j++) {
			fprintf(out, f[j].hex ? "%s=0x%llx\n" : "%s=%llu\n", f[j].key,
				(unsigned long long)f[j].value);
			if (evs->ev[i].bp_symbol && !strcmp(f[j].key, "bp_addr"))
				bp_symbol(&evs->ev[i], out, false);
		}
		extras(&evs->ev[i], out, false);
		more(&evs->ev[i], out, false);
	}
	if (json)
		fputs("]\n", out);
	return ferror(out) ? -EIO : 0;
}
