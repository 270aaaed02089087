/*
 * pfm_lib.h: the libpfm4 functions perfscript uses, loaded with dlopen at
 * the first vendor event name (event/pfm_lib.c).
 */
#ifndef PS_EVENT_PFM_LIB_H
#define PS_EVENT_PFM_LIB_H

#include <linux/perf_event.h>

#include <perfmon/pfmlib_perf_event.h>

struct ps_pfm_api {
	pfm_err_t (*initialize)(void);
	void (*terminate)(void);
	int (*get_os_event_encoding)(const char *str, int dfl_plm, pfm_os_t os, void *args);
	int (*find_event)(const char *str);
	pfm_err_t (*get_event_info)(int idx, pfm_os_t os, pfm_event_info_t *output);
	pfm_err_t (*get_event_attr_info)(int eidx, int aidx, pfm_os_t os,
					 pfm_event_attr_info_t *output);
	pfm_err_t (*get_pmu_info)(pfm_pmu_t pmu, pfm_pmu_info_t *output);
	int (*get_event_next)(int idx);
	const char *(*strerror)(int code);
};

extern struct ps_pfm_api ps_pfm;

/* Load libpfm4 once: 0, or -ENOENT with the reason in msg. */
int ps_pfm__load(char *msg, size_t msglen);

#endif
