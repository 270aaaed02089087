/*
 * sysfs.c: what sysfs says about a PMU, read once. A PMU is a
 * directory under $PERFSCRIPT_SYSFS-or-/sys/bus/event_source/devices with a
 * `type` file (its attr.type), `format/` files that map term names onto bit
 * ranges of config, config1 and config2 ("config:0-7,21"), `events/` aliases
 * (a term list, plus optional .scale and .unit), and for uncore PMUs a
 * `cpumask` saying which CPUs to open it on. Parsing event strings in a loop
 * must not re-read dozens of files each time, so each PMU is read on first
 * use and kept for the life of the process, keyed by the sysfs root (tests
 * switch roots). Entries are immutable once published and never freed, so
 * parsed events can point into them. A format file that does not parse is
 * kept with the reason, so only a string that uses that term fails.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/array.h"
#include "base/cpus.h"
#include "event/event.h"

struct cached {
	struct cached *next;
	char *dir; /* the devices directory it was read from */
	struct ps_ev_pmu pmu;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cached *cache;

int ps_ev__devices_dir(char *buf, size_t len)
{
	const char *sysfs = getenv("PERFSCRIPT_SYSFS");

	if (!sysfs || !*sysfs)
		sysfs = "/sys";
	if (snprintf(buf, len, "%s/bus/event_source/devices", sysfs) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* Read a small text file, trimmed of surrounding white space: its length or -errno. */
static ssize_t read_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	size_t len, start = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	len = (size_t)n;
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		len--;
	while (start < len && isspace((unsigned char)buf[start]))
		start++;
	memmove(buf, buf + start, len - start);
	buf[len - start] = '\0';
	return (ssize_t)(len - start);
}

static bool read_num(const char **p, unsigned *v)
{
	unsigned x = 0;

	if (!isdigit((unsigned char)**p))
		return false;
	while (isdigit((unsigned char)**p)) {
		x = x * 10 + (unsigned)(**p - '0');
		if (x > 1000000)
			return false;
		(*p)++;
	}
	*v = x;
	return true;
}

/* "configN:lo-hi,bit,..." into f; NULL, or why the text is not a format. */
static const char *parse_format(const char *text, struct ps_ev_format *f)
{
	const char *p = text;

	if (!*text)
		return "empty file";
	if (!strncmp(p, "config2:", 8))
		f->word = 2, p += 8;
	else if (!strncmp(p, "config1:", 8))
		f->word = 1, p += 8;
	else if (!strncmp(p, "config:", 7))
		f->word = 0, p += 7;
	else
		return "not 'config:', 'config1:' or 'config2:' followed by bit ranges";
	for (;;) {
		unsigned lo, hi;
		uint64_t bits;

		if (!read_num(&p, &lo))
			return "bad bit range";
		hi = lo;
		if (*p == '-' && (p++, !read_num(&p, &hi)))
			return "bad bit range";
		if (hi < lo || hi > 63)
			return "bit range out of order or past bit 63";
		if (f->nranges == sizeof(f->lo))
			return "too many bit ranges";
		bits = (hi - lo == 63 ? UINT64_MAX : ((UINT64_C(1) << (hi - lo + 1)) - 1)) << lo;
		if (f->mask & bits)
			return "bit ranges overlap";
		f->mask |= bits;
		f->lo[f->nranges] = (uint8_t)lo;
		f->hi[f->nranges++] = (uint8_t)hi;
		f->width += hi - lo + 1;
		if (*p == '\0')
			return NULL;
		if (*p++ != ',')
			return "unexpected text after a bit range";
	}
}

static int cmp_format(const void *a, const void *b)
{
	return strcmp(((const struct ps_ev_format *)a)->name,
		      ((const struct ps_ev_format *)b)->name);
}

static int cmp_alias(const void *a, const void *b)
{
	return strcmp(((const struct ps_ev_alias *)a)->name, ((const struct ps_ev_alias *)b)->name);
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n > m && !strcmp(s + n - m, suf);
}

/* Room for one more entry in arr of n entries (the capacity goes with n:
 * 4, then doubling at each power of two); 0 or -ENOMEM. */
static int grow(void *arr, size_t n, size_t elem)
{
	/* Capacity is 4, then doubles whenever n reaches a power of two. */
	if (n != 0 && (n < 4 || (n & (n - 1))))
		return 0;
	return ps_array__reserve_exact(arr, n ? n * 2 : 4, elem);
}

static int load_formats(const char *pmudir, struct ps_ev_pmu *pmu)
{
	char path[PATH_MAX], text[256];
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (snprintf(path, sizeof(path), "%s/format", pmudir) >= (int)sizeof(path) ||
	    !(d = opendir(path)))
		return 0; /* a PMU without format/ takes config= only */
	while ((de = readdir(d))) {
		struct ps_ev_format *f;

		if (de->d_name[0] == '.')
			continue;
		if ((r = grow(&pmu->fmt, pmu->nfmt, sizeof(*f))) < 0)
			break;
		f = &pmu->fmt[pmu->nfmt];
		memset(f, 0, sizeof(*f));
		if (snprintf(path, sizeof(path), "%s/format/%s", pmudir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		if (read_text(path, text, sizeof(text)) < 0)
			text[0] = '\0';
		if (!(f->name = strdup(de->d_name)) || !(f->spec = strdup(text))) {
			free(f->name);
			r = -ENOMEM;
			break;
		}
		f->bad = parse_format(text, f);
		pmu->nfmt++;
	}
	closedir(d);
	if (pmu->nfmt)
		qsort(pmu->fmt, pmu->nfmt, sizeof(*pmu->fmt), cmp_format);
	return r;
}

static int load_aliases(const char *pmudir, struct ps_ev_pmu *pmu)
{
	char path[PATH_MAX], text[512];
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (snprintf(path, sizeof(path), "%s/events", pmudir) >= (int)sizeof(path) ||
	    !(d = opendir(path)))
		return 0;
	while ((de = readdir(d))) {
		struct ps_ev_alias *a;
		ssize_t n;

		if (de->d_name[0] == '.' || has_suffix(de->d_name, ".scale") ||
		    has_suffix(de->d_name, ".unit") || has_suffix(de->d_name, ".per-pkg") ||
		    has_suffix(de->d_name, ".snapshot"))
			continue;
		if (snprintf(path, sizeof(path), "%s/events/%s", pmudir, de->d_name) >=
			(int)sizeof(path) ||
		    read_text(path, text, sizeof(text)) < 0)
			continue;
		if ((r = grow(&pmu->alias, pmu->nalias, sizeof(*a))) < 0)
			break;
		a = &pmu->alias[pmu->nalias];
		memset(a, 0, sizeof(*a));
		if (!(a->name = strdup(de->d_name)) || !(a->terms = strdup(text))) {
			free(a->name);
			r = -ENOMEM;
			break;
		}
		pmu->nalias++;
		if (snprintf(path, sizeof(path), "%s/events/%s.scale", pmudir, de->d_name) <
			(int)sizeof(path) &&
		    read_text(path, text, sizeof(text)) > 0) {
			char *end;
			double v = strtod(text, &end);

			/* A scale that is not a positive number is ignored, not fatal. */
			a->scale = *end == '\0' && v > 0 ? v : 0;
		}
		if (snprintf(path, sizeof(path), "%s/events/%s.unit", pmudir, de->d_name) <
			(int)sizeof(path) &&
		    (n = read_text(path, text, sizeof(text))) > 0 && !(a->unit = strdup(text))) {
			r = -ENOMEM;
			break;
		}
	}
	closedir(d);
	if (pmu->nalias)
		qsort(pmu->alias, pmu->nalias, sizeof(*pmu->alias), cmp_alias);
	return r;
}

static void pmu_release(struct ps_ev_pmu *pmu)
{
	for (size_t i = 0; i < pmu->nfmt; i++) {
		free(pmu->fmt[i].name);
		free(pmu->fmt[i].spec);
	}
	for (size_t i = 0; i < pmu->nalias; i++) {
		free(pmu->alias[i].name);
		free(pmu->alias[i].terms);
		free(pmu->alias[i].unit);
	}
	free(pmu->fmt);
	free(pmu->alias);
	free(pmu->cpus);
	free(pmu->name);
}

/* Read one PMU: 1 loaded, 0 no such PMU, < 0 -errno (type unreadable: *why). */
static int load_pmu(const char *dir, const char *name, struct ps_ev_pmu *pmu, char *why,
		    size_t whylen)
{
	char pmudir[PATH_MAX], path[PATH_MAX], text[4096];
	uint64_t type;
	int r;

	memset(pmu, 0, sizeof(*pmu));
	if (snprintf(pmudir, sizeof(pmudir), "%s/%s", dir, name) >= (int)sizeof(pmudir) ||
	    snprintf(path, sizeof(path), "%s/type", pmudir) >= (int)sizeof(path))
		return 0;
	r = ps_ev__read_u64_file(path, &type);
	if (r == -ENOENT || r == -ENOTDIR)
		return 0;
	if (r < 0 || type > UINT32_MAX) {
		snprintf(why, whylen, "cannot read its type from %s", path);
		return r < 0 ? r : -ERANGE;
	}
	pmu->type = (uint32_t)type;
	if (!(pmu->name = strdup(name)))
		return -ENOMEM;
	/* Uncore PMUs say where to open them; hybrid core PMUs name their CPUs,
	 * which is also how perf tells a core PMU (cpu_core, cpu_atom) apart. */
	pmu->core = strcmp(name, "cpu") == 0;
	if ((snprintf(path, sizeof(path), "%s/cpumask", pmudir) < (int)sizeof(path) &&
	     read_text(path, text, sizeof(text)) > 0) ||
	    (snprintf(path, sizeof(path), "%s/cpus", pmudir) < (int)sizeof(path) &&
	     read_text(path, text, sizeof(text)) > 0 && (pmu->core = true))) {
		int n = 0;

		r = ps_cpus__parse(text, &pmu->cpus, &n);
		if (r == -ENOMEM)
			goto fail;
		/* a cpumask we cannot read leaves the PMU usable on any CPU */
		pmu->ncpus = r < 0 ? 0 : (size_t)n;
	}
	if ((r = load_formats(pmudir, pmu)) < 0 || (r = load_aliases(pmudir, pmu)) < 0)
		goto fail;
	return 1;
fail:
	pmu_release(pmu);
	return r;
}

int ps_ev__pmu_find(const char *name, size_t len, const struct ps_ev_pmu **out, int column,
		    struct ps_event_error *err)
{
	char dir[PATH_MAX], nm[NAME_MAX + 1], why[PATH_MAX + 64] = "";
	struct cached *c;
	int r;

	if (!ps_ev__safe_component(name, len) || ps_ev__devices_dir(dir, sizeof(dir)) < 0)
		return 0;
	memcpy(nm, name, len);
	nm[len] = '\0';
	pthread_mutex_lock(&cache_lock);
	for (c = cache; c; c = c->next)
		if (!strcmp(c->pmu.name, nm) && !strcmp(c->dir, dir))
			break;
	pthread_mutex_unlock(&cache_lock);
	if (c) {
		*out = &c->pmu;
		return 1;
	}
	if (!(c = calloc(1, sizeof(*c))))
		return ps_ev__nomem(err);
	r = load_pmu(dir, nm, &c->pmu, why, sizeof(why));
	if (r > 0 && !(c->dir = strdup(dir))) {
		pmu_release(&c->pmu);
		r = -ENOMEM;
	}
	if (r <= 0) {
		free(c);
		if (r == -ENOMEM)
			return ps_ev__nomem(err);
		if (r < 0)
			return ps_ev__fail(err, PS_ERR_NOT_SUPPORTED, column, name, len,
					   "PMU '%.*s' at column %d: %s", (int)len, name, column,
					   why);
		return 0;
	}
	/* Two threads may read the same PMU at once; the second copy is kept
	 * too (the list only grows), which is harmless. */
	pthread_mutex_lock(&cache_lock);
	c->next = cache;
	cache = c;
	pthread_mutex_unlock(&cache_lock);
	*out = &c->pmu;
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ps_ev__pmu_names(char ***names, size_t *n)
{
	char dir[PATH_MAX];
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0;
	DIR *d;
	int r = 0;

	*names = NULL;
	*n = 0;
	if ((r = ps_ev__devices_dir(dir, sizeof(dir))) < 0)
		return r;
	if (!(d = opendir(dir)))
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if ((r = grow(&v, cnt, sizeof(*v))) < 0 || !(v[cnt] = strdup(de->d_name))) {
			r = -ENOMEM;
			break;
		}
		cnt++;
	}
	closedir(d);
	if (r < 0) {
		ps_ev__names_free(v, cnt);
		return r;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_str);
	*names = v;
	*n = cnt;
	return 0;
}

void ps_ev__names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

const struct ps_ev_format *ps_ev__pmu_format(const struct ps_ev_pmu *pmu, const char *key,
					     size_t len)
{
	for (size_t i = 0; i < pmu->nfmt; i++)
		if (strlen(pmu->fmt[i].name) == len && !memcmp(pmu->fmt[i].name, key, len))
			return &pmu->fmt[i];
	return NULL;
}

/* Aliases match case-insensitively, as perf's do. */
const struct ps_ev_alias *ps_ev__pmu_alias(const struct ps_ev_pmu *pmu, const char *key, size_t len)
{
	for (size_t i = 0; i < pmu->nalias; i++)
		if (strlen(pmu->alias[i].name) == len && !strncasecmp(pmu->alias[i].name, key, len))
			return &pmu->alias[i];
	return NULL;
}
