/*
 * explain.c: why a perf_event_open(2) failed, in terms of this machine: which
 * PMUs sysfs lists, the current kernel.perf_event_paranoid, RLIMIT_NOFILE,
 * the sample-rate limit, and so says not only what failed for which event
 * but what the user can do about it. The Lua binding reaches the same text
 * through the msg of ps_session__open().
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <linux/hw_breakpoint.h>

#include "base/advice.h"
#include "base/cpus.h"
#include "core/internal.h"

#define PS_PMU_DIR "/sys/bus/event_source/devices"

/* snprintf that appends and never overruns; b->want counts what did not fit. */
struct msgbuf {
	char *buf;
	size_t len;
	size_t want;
};

__attribute__((format(printf, 2, 3))) static void add(struct msgbuf *b, const char *fmt, ...)
{
	size_t used = b->want < b->len ? b->want : (b->len ? b->len - 1 : 0);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->buf ? b->buf + used : NULL, b->len > used ? b->len - used : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->want += (size_t)n;
}

static int read_long(const char *path, long *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%ld", v) == 1;
	fclose(f);
	return ok ? 0 : -EIO;
}

/* The sysfs PMU whose type is `type`, into name; false if none. */
static bool pmu_by_type(uint32_t type, char *name, size_t len) /* len > 0 */
{
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(PS_PMU_DIR);

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char path[512];
		long t;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PS_PMU_DIR "/%s/type", de->d_name);
		if (read_long(path, &t) == 0 && t == (long)type) {
			strncpy(name, de->d_name, len - 1);
			name[len - 1] = '\0';
			found = true;
		}
	}
	closedir(d);
	return found;
}

/* Generic hardware, cache and raw events all go to the core PMU (type RAW). */
static bool is_core_type(uint32_t type)
{
	return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE || type == PERF_TYPE_RAW;
}

/* Events scheduled in the software context: they may join any group. */
static bool is_sw_type(uint32_t type)
{
	return type == PERF_TYPE_SOFTWARE || type == PERF_TYPE_TRACEPOINT ||
	       type == PERF_TYPE_BREAKPOINT;
}

static void explain_unsupported(struct msgbuf *b, const struct ps_open_failure *f)
{
	const struct perf_event_attr *a = f->attr;
	char pmu[128];

	add(b, "not supported by this machine's PMU");
	if (is_core_type(a->type) && !pmu_by_type(PERF_TYPE_RAW, pmu, sizeof(pmu))) {
		add(b,
		    " (no hardware counters here, e.g. a VM); software events such as "
		    "task-clock and tracepoints still work%s",
		    ps_advice(PS_ADVICE_LIST_EVENTS, ""));
		return;
	}
	if (a->type == PERF_TYPE_TRACEPOINT) {
		add(b, " (no tracepoint with id %llu on this kernel)%s",
		    (unsigned long long)a->config, ps_advice(PS_ADVICE_LIST_EVENTS, ""));
		return;
	}
	if (f->err == EOPNOTSUPP && (a->sample_period || a->freq)) {
		add(b, " (it cannot sample on overflow here); count it without period= or freq=");
		return;
	}
	if (f->err == ENODEV && f->cpu >= 0) {
		add(b, " (CPU %d is offline or lacks this PMU)", f->cpu);
		return;
	}
	if (!pmu_by_type(is_core_type(a->type) ? PERF_TYPE_RAW : a->type, pmu, sizeof(pmu)))
		snprintf(pmu, sizeof(pmu), "type %u", a->type);
	add(b, " (the %s PMU has no event config=%#llx)%s", pmu, (unsigned long long)a->config,
	    ps_advice(PS_ADVICE_LIST_EVENTS, ""));
}

static void explain_permission(struct msgbuf *b, const struct ps_open_failure *f)
{
	const struct perf_event_attr *a = f->attr;
	char pmu[128];
	long paranoid = 2;
	bool have = read_long("/proc/sys/kernel/perf_event_paranoid", &paranoid) == 0;

	add(b, "permission denied");
	if (have)
		add(b, " (kernel.perf_event_paranoid is %ld)", paranoid);
	if (geteuid() == 0) {
		add(b, "; running as root, so kernel lockdown, an LSM (SELinux, AppArmor), seccomp "
		       "or a container is refusing perf_event_open");
		return;
	}
	if (pmu_by_type(a->type, pmu, sizeof(pmu)) &&
	    (!strcmp(pmu, "kprobe") || !strcmp(pmu, "uprobe"))) {
		/* perf_{k,u}probe_event_init: perfmon_capable() or -EACCES */
		add(b,
		    "; run as root or with CAP_PERFMON: the kernel asks for it for every %s, "
		    "whatever kernel.perf_event_paranoid says",
		    pmu);
		return;
	}
	add(b, "; run as root or with CAP_PERFMON");
	if (have && paranoid > 2)
		add(b, ", or lower kernel.perf_event_paranoid to 2 "
		       "(sysctl -w kernel.perf_event_paranoid=2): above 2 nothing is allowed");
	else if (f->pid == -1)
		add(b,
		    ", or lower kernel.perf_event_paranoid to 0 for system-wide%s counting "
		    "(sysctl -w kernel.perf_event_paranoid=0)",
		    ps_advice(PS_ADVICE_SYSTEM_WIDE, ""));
	else if (!a->exclude_kernel && paranoid >= 2 && a->type != PERF_TYPE_TRACEPOINT)
		add(b, ", use the :u modifier to count user space only, or lower "
		       "kernel.perf_event_paranoid to 1 (sysctl -w kernel.perf_event_paranoid=1)");
	if (a->type == PERF_TYPE_TRACEPOINT)
		add(b, "; tracepoints need root or CAP_PERFMON, or kernel.perf_event_paranoid=-1, "
		       "and read access to tracefs (/sys/kernel/tracing/events)");
	if (f->kind == PS_TARGET_PID)
		add(b, "; attaching to a process also needs ptrace access to it (same user, "
		       "or CAP_SYS_PTRACE; see kernel.yama.ptrace_scope)");
}

/* EINVAL says only "something in the attr": name the field most likely at fault. */
static void explain_invalid(struct msgbuf *b, const struct ps_open_failure *f)
{
	const struct perf_event_attr *a = f->attr, *l = f->leader;
	long max_rate = 0;

	add(b, "invalid event attributes: ");
#if defined(__x86_64__) || defined(__i386__)
	if (a->type == PERF_TYPE_BREAKPOINT && a->bp_type == HW_BREAKPOINT_R) {
		/* The debug registers trap writes, or reads and writes together:
		 * there is no read-only kind (perf says "not supported"). */
		add(b, "x86 hardware breakpoints cannot be read-only: use :rw (reads and writes) "
		       "or :w");
		return;
	}
#endif
	if (f->cpu >= 0 && !ps_cpus__is_online(f->cpu)) {
		add(b, "cpu=%d is not an online CPU (see /sys/devices/system/cpu/online)", f->cpu);
	} else if (a->freq &&
		   read_long("/proc/sys/kernel/perf_event_max_sample_rate", &max_rate) == 0 &&
		   a->sample_freq > (uint64_t)max_rate) {
		add(b, "freq=%llu is above kernel.perf_event_max_sample_rate (%ld)",
		    (unsigned long long)a->sample_freq, max_rate);
	} else if (a->freq && a->sample_freq == 0) {
		add(b, "freq is set with a zero frequency (sample_period and sample_freq share a "
		       "field: use one of period= or freq=)");
	} else if (a->precise_ip) {
		add(b, "precise_ip=%u (the p modifiers) is too high for this PMU; use fewer p's",
		    (unsigned)a->precise_ip);
	} else if (l && !is_sw_type(a->type) && !is_sw_type(l->type) &&
		   !(is_core_type(a->type) && is_core_type(l->type)) && a->type != l->type) {
		add(b,
		    "a group member on another PMU (type %u) than its leader (type %u); "
		    "put them in separate groups",
		    a->type, l->type);
	} else if (a->exclude_hv || a->exclude_idle || a->exclude_host || a->exclude_guest ||
		   (is_sw_type(a->type) && a->type != PERF_TYPE_SOFTWARE &&
		    (a->exclude_user || a->exclude_kernel))) {
		add(b, "exclude bits (the u/k/h/H/G modifiers) this PMU does not support; drop "
		       "the modifiers");
	} else if (a->inherit && (a->sample_type & PERF_SAMPLE_READ)) {
		add(b, "inherit with sample_type READ (this kernel needs PERF_SAMPLE_TID too, or "
		       "no inherit)");
	} else if (a->inherit && (a->read_format & PERF_FORMAT_GROUP)) {
		add(b, "a group read (read_format GROUP) of an inherited event");
	} else if (!is_sw_type(a->type) || a->type == PERF_TYPE_SOFTWARE) {
		char pmu[128];

		if (!pmu_by_type(is_core_type(a->type) ? PERF_TYPE_RAW : a->type, pmu, sizeof(pmu)))
			snprintf(pmu, sizeof(pmu), "type %u", a->type);
		add(b, "config=%#llx (config1=%#llx) is not a valid event for the %s PMU",
		    (unsigned long long)a->config, (unsigned long long)a->config1, pmu);
	} else {
		add(b,
		    "the kernel rejected type %u config %#llx; check the event's terms and "
		    "modifiers",
		    a->type, (unsigned long long)a->config);
	}
}

int ps_explain_open_error(const struct ps_open_failure *f, char *msg, size_t msglen)
{
	struct msgbuf b = {msg, msglen, 0};
	struct rlimit rl;

	if (msg && msglen)
		msg[0] = '\0';
	/* a target that exited is about the process, not the event (one of
	 * perfscript's own, as its side-band carrier, would only puzzle) */
	if (f->err != ESRCH)
		add(&b, "cannot open '%s': ", f->name ? f->name : "?");
	switch (f->err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		explain_unsupported(&b, f);
		break;
	case EACCES:
	case EPERM:
		explain_permission(&b, f);
		break;
	case EMFILE:
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			add(&b,
			    "too many open files (the limit is %llu); raise it with `ulimit -n`, "
			    "or use fewer counters or CPUs (each needs one fd per thread or CPU)",
			    (unsigned long long)rl.rlim_cur);
		else
			add(&b, "too many open files; raise `ulimit -n`, or use fewer counters or "
				"CPUs");
		break;
	case ENFILE:
		add(&b,
		    "the system's file table is full (fs.file-max); use fewer counters or CPUs");
		break;
	case ESRCH:
		add(&b, "the target process %d is gone: it exited before its events were open",
		    (int)f->pid);
		break;
	case EINVAL:
		explain_invalid(&b, f);
		break;
	case EBUSY:
		add(&b, "the PMU is busy: an exclusive or pinned event (another perf, or the NMI "
			"watchdog: sysctl kernel.nmi_watchdog=0) holds the counters it needs; drop "
			"pinned/exclusive or stop the other user");
		break;
	case ENOSPC:
		add(&b, "no free counter or debug register for it (hardware breakpoints are few)");
		break;
	case EOVERFLOW:
		add(&b, "the callchain depth is above kernel.perf_event_max_stack");
		break;
	case E2BIG:
		if (f->leader) { /* the group's read would pass the kernel's 16 KiB */
			uint64_t rf = f->leader->read_format;
			unsigned head = 8 + 8 * !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
					8 * !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING),
				 entry = 8 + 8 * !!(rf & PERF_FORMAT_ID) +
					 8 * !!(rf & PERF_FORMAT_LOST);

			add(&b,
			    "the group is too large: the kernel reads a group in at most 16 KiB, "
			    "which holds %u events with this read format; split it into groups of "
			    "at most %u",
			    (16384 - head) / entry, (16384 - head) / entry);
		} else
			add(&b,
			    "this kernel does not know the attr size %u perfscript was built with",
			    (unsigned)f->attr->size);
		break;
	default:
		add(&b, "%s", strerror(f->err));
		break;
	}
	return (int)b.want;
}
