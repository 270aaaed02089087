/*
 * http_mhd.c: libmicrohttpd, loaded with dlopen when the first listener is
 * made rather than linked: it brings the TLS stack with it (ten libraries,
 * 3 MB and 1.7 ms at every start-up), which a session without a listener
 * would pay for nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "loop/http.h"

struct ps_mhd_api ps_mhd;

/* Store dlsym(lib, name) into the function pointer at fp; false if missing. */
static bool resolve(void *lib, const char *name, void *fp)
{
	void *sym = dlsym(lib, name);

	memcpy(fp, &sym, sizeof(sym));
	return sym != NULL;
}

int ps_mhd__load(char *msg, size_t msglen)
{
	static void *lib;
	struct ps_mhd_api *m = &ps_mhd;

	if (lib)
		return 0;
	if (!(lib = dlopen(PS_MHD_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(msg, msglen,
			 "cannot load %s for the HTTP listener: %s (install libmicrohttpd12)",
			 PS_MHD_SONAME, dlerror());
		return -ENOENT;
	}
	if (resolve(lib, "MHD_start_daemon", &m->start_daemon) &&
	    resolve(lib, "MHD_stop_daemon", &m->stop_daemon) &&
	    resolve(lib, "MHD_get_daemon_info", &m->get_daemon_info) &&
	    resolve(lib, "MHD_get_connection_info", &m->get_connection_info) &&
	    resolve(lib, "MHD_get_timeout", &m->get_timeout) && resolve(lib, "MHD_run", &m->run) &&
	    resolve(lib, "MHD_add_connection", &m->add_connection) &&
	    resolve(lib, "MHD_lookup_connection_value", &m->lookup_connection_value) &&
	    resolve(lib, "MHD_create_response_from_buffer", &m->create_response_from_buffer) &&
	    resolve(lib, "MHD_add_response_header", &m->add_response_header) &&
	    resolve(lib, "MHD_queue_response", &m->queue_response) &&
	    resolve(lib, "MHD_queue_basic_auth_fail_response",
		    &m->queue_basic_auth_fail_response) &&
	    resolve(lib, "MHD_basic_auth_get_username_password",
		    &m->basic_auth_get_username_password) &&
	    resolve(lib, "MHD_destroy_response", &m->destroy_response) &&
	    resolve(lib, "MHD_free", &m->free) &&
	    resolve(lib, "MHD_get_connection_values", &m->get_connection_values) &&
	    resolve(lib, "MHD_suspend_connection", &m->suspend_connection) &&
	    resolve(lib, "MHD_resume_connection", &m->resume_connection))
		return 0;
	snprintf(msg, msglen, "cannot use %s for the HTTP listener: %s", PS_MHD_SONAME, dlerror());
	dlclose(lib);
	lib = NULL;
	return -ENOENT;
}
