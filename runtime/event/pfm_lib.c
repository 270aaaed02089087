/*
 * pfm_lib.c: libpfm4, loaded with dlopen at the first vendor event name
 * rather than linked. Its event tables are pointers the dynamic linker
 * relocates at load time: 2 MB of every session's memory (1 MB of it
 * dirty), paid by sessions that only count perf's own event names, the
 * fleet agent among them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "event/pfm_lib.h"

#ifndef PS_PFM_SONAME /* the Makefile names the one it links against */
#define PS_PFM_SONAME "libpfm.so.4"
#endif

struct ps_pfm_api ps_pfm;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static void *lib;
static char why[256];

/* Store dlsym(lib, name) into the function pointer at fp; false if missing. */
static bool resolve(const char *name, void *fp)
{
	void *sym = dlsym(lib, name);

	memcpy(fp, &sym, sizeof(sym));
	return sym != NULL;
}

static int load(void)
{
	struct ps_pfm_api *p = &ps_pfm;

	if (!(lib = dlopen(PS_PFM_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(why, sizeof(why),
			 "cannot load %s for vendor event names: %s (install libpfm4)",
			 PS_PFM_SONAME, dlerror());
		return -ENOENT;
	}
	if (resolve("pfm_initialize", &p->initialize) && resolve("pfm_terminate", &p->terminate) &&
	    resolve("pfm_get_os_event_encoding", &p->get_os_event_encoding) &&
	    resolve("pfm_find_event", &p->find_event) &&
	    resolve("pfm_get_event_info", &p->get_event_info) &&
	    resolve("pfm_get_event_attr_info", &p->get_event_attr_info) &&
	    resolve("pfm_get_pmu_info", &p->get_pmu_info) &&
	    resolve("pfm_get_event_next", &p->get_event_next) &&
	    resolve("pfm_strerror", &p->strerror))
		return 0;
	snprintf(why, sizeof(why), "cannot use %s for vendor event names: %s", PS_PFM_SONAME,
		 dlerror());
	dlclose(lib);
	lib = NULL;
	return -ENOENT;
}

int ps_pfm__load(char *msg, size_t msglen)
{
	static bool tried;
	static int rc;

	pthread_mutex_lock(&load_lock);
	if (!tried) {
		rc = load();
		tried = true;
	}
	pthread_mutex_unlock(&load_lock);
	if (rc && msg && msglen)
		snprintf(msg, msglen, "%s", why);
	return rc;
}
