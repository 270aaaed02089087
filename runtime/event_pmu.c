/*
 * event_pmu.c: resolves `PMU/terms/` names, where PMU is a directory under
 * /sys/bus/event_source/devices ($PERFSCRIPT_SYSFS replaces /sys when set):
 * the attr type comes from the PMU's `type` file and config/config1/config2
 * from the generic terms. The PMU's own format terms (event=, umask=, ...
 * described by its format/ directory) come in a later change; this file is
 * where they will be encoded, through the resolver's term hook, which for now
 * reports them as not supported yet.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "event.h"

static int devices_dir(char *buf, size_t len)
{
	const char *sysfs = getenv("PERFSCRIPT_SYSFS");

	if (!sysfs || !*sysfs)
		sysfs = "/sys";
	if (snprintf(buf, len, "%s/bus/event_source/devices", sysfs) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

static int pmu_resolve(const struct ps_ev_ref *ref, struct perf_event_attr *attr,
		       struct ps_event_error *err)
{
	char dir[PATH_MAX], path[PATH_MAX];
	uint64_t type;
	int r;

	if (ref->sys || !ref->terms || !ps_ev__safe_component(ref->name, ref->name_len))
		return 0;
	if (devices_dir(dir, sizeof(dir)) < 0 ||
	    snprintf(path, sizeof(path), "%s/%.*s/type", dir, (int)ref->name_len, ref->name) >=
		    (int)sizeof(path))
		return 0;
	r = ps_ev__read_u64_file(path, &type);
	if (r == -ENOENT || r == -ENOTDIR)
		return 0;
	if (r < 0 || type > UINT32_MAX)
		return ps_ev__fail(err, PS_ERR_NOT_SUPPORTED, ref->column, ref->name, ref->name_len,
				   "PMU '%.*s' at column %d: cannot read its type from %s",
				   (int)ref->name_len, ref->name, ref->column, path);
	attr->type = (uint32_t)type;
	attr->config = 0;
	return 1;
}

/* PMU names are candidates only for NAME/terms/, where a PMU was meant. */
static void pmu_suggest(const struct ps_ev_ref *ref, struct ps_ev_suggest *s)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (ref->sys || !ref->terms || devices_dir(dir, sizeof(dir)) < 0 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			ps_ev__suggest(s, de->d_name);
	closedir(d);
}

/* A term the generic table does not know: if the PMU's format/ directory
 * names it, say that format terms are not supported yet (later: encode it
 * into config/config1/config2 from the format's bit ranges). */
static int pmu_term(const struct ps_ev_ref *ref, const char *key, size_t key_len,
		    const char *val, size_t val_len, int column, struct perf_event_attr *attr,
		    struct ps_event_error *err)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stat st;

	(void)val;
	(void)val_len;
	(void)attr;
	if (ref->sys || !ps_ev__safe_component(key, key_len) || devices_dir(dir, sizeof(dir)) < 0)
		return 0;
	if (snprintf(path, sizeof(path), "%s/%.*s/format/%.*s", dir, (int)ref->name_len,
		     ref->name, (int)key_len, key) >= (int)sizeof(path) ||
	    stat(path, &st) != 0)
		return 0;
	return ps_ev__fail(err, PS_ERR_NOT_SUPPORTED, column, key, key_len,
			   "term '%.*s' at column %d is a format term of PMU '%.*s', not supported "
			   "yet (use config=, config1=, config2=)",
			   (int)key_len, key, column, (int)ref->name_len, ref->name);
}

const struct ps_ev_resolver ps_ev__pmu = {
	.what = "pmu",
	.resolve = pmu_resolve,
	.suggest = pmu_suggest,
	.term = pmu_term,
};
