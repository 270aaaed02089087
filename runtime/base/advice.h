/*
 * advice.h: what a front end adds to the library's messages (runtime/base/
 * advice.c). The library explains failures in its own terms ("count a
 * process, or give the address"); the perfscript CLI knows how a user does
 * that with its options and says so ("-p PID"), by setting the advice here
 * once at start. A library client that sets nothing gets the plain
 * messages. Each piece of advice is a fragment written to fit where the
 * library's sentence leaves room for it (see the comments below).
 */
#ifndef PS_BASE_ADVICE_H
#define PS_BASE_ADVICE_H

enum ps_advice {
	PS_ADVICE_LIST_EVENTS, /* "; see perfscript -l": after "not supported by this PMU" */
	PS_ADVICE_RING_PAGES,  /* " (-b PAGES)": after "a larger ring" */
	PS_ADVICE_SYSTEM_WIDE, /* " (-a/-C)": after "system-wide" */
	PS_ADVICE_ATTACH,      /* " (-p PID)": after "attach to the running process" */
	PS_ADVICE_PROCESS,     /* " (-p PID, -c CMD)": after "count a process" */
	PS_ADVICE_DURATION,    /* "-T": names the duration that expired */
	PS_ADVICE_BACKEND,     /* "; see --backend": after "it is on the perf path" */
	PS_ADVICE_N,
};

/* Set one piece of advice (the string is kept, not copied); NULL clears it. */
void ps_advice__set(enum ps_advice what, const char *text);
/* The advice, or def when none was set (def may be ""). */
const char *ps_advice(enum ps_advice what, const char *def);

#endif /* PS_BASE_ADVICE_H */
