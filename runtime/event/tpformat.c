/*
 * tpformat.c: a tracepoint's fields, from its tracefs `format` file, and
 * their values in a sample's raw record (PERF_SAMPLE_RAW). Each line
 * "field:TYPE NAME[N];	offset:O;	size:S;	signed:B;" becomes a field: an
 * integer of S bytes, a char[N] string, an array of N integers, or a
 * dynamic one (__data_loc / __rel_loc: a 32-bit word, length << 16 |
 * offset, the offset counted from the record's start or, for __rel_loc,
 * from the end of the word itself) holding a string or integers. Pointers
 * (const char *filename of a syscall) are integers: the memory they point
 * to is the target's, and only a sample's reader can fetch it. Formats are
 * read once per tracepoint and kept for the process, like sysfs PMUs, so a
 * pointer to one stays valid. Decoding never reads outside the record.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"

struct ps_tp_format {
	struct ps_tp_format *next; /* the process-wide cache */
	char *name;		   /* "subsys:event" */
	uint64_t id;
	struct ps_tp_field *fields;
	size_t nfields;
};

static struct ps_tp_format *cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* "unsigned int" -> "unsigned int", trimmed of blanks at both ends. */
static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

static bool is_char_type(const char *t)
{
	/* text, not bytes: a u8 or unsigned char array (a MAC address) is numbers */
	static const char *const chars[] = {"char", "const char", "signed char"};

	for (size_t i = 0; i < sizeof(chars) / sizeof(chars[0]); i++)
		if (!strcmp(t, chars[i]))
			return true;
	return false;
}

/* The size of an element of a dynamic array, for the integer types
 * kernels use in __data_loc arrays; 1 (bytes) for anything else. */
static uint32_t type_size(const char *t)
{
	static const struct {
		const char *name;
		uint32_t size;
	} sizes[] = {
	    {"u8", 1},
	    {"__u8", 1},
	    {"s8", 1},
	    {"unsigned char", 1},
	    {"bool", 1},
	    {"u16", 2},
	    {"__u16", 2},
	    {"s16", 2},
	    {"short", 2},
	    {"unsigned short", 2},
	    {"u32", 4},
	    {"__u32", 4},
	    {"s32", 4},
	    {"int", 4},
	    {"unsigned int", 4},
	    {"u64", 8},
	    {"__u64", 8},
	    {"s64", 8},
	    {"long", 8},
	    {"unsigned long", 8},
	    {"size_t", 8},
	    {"long long", 8},
	    {"unsigned long long", 8},
	};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(t, sizes[i].name))
			return sizes[i].size;
	return 1;
}

/* Split "TYPE NAME[N]" into f; decl is modified. false when it does not parse. */
static bool parse_decl(char *decl, struct ps_tp_field *f, char **type, char **name)
{
	char *br = strchr(decl, '['), *sp;
	long dim = 0;
	bool loc = false;

	if (!strncmp(decl, "__data_loc ", 11) || !strncmp(decl, "__rel_loc ", 10)) {
		f->kind = decl[2] == 'r' ? PS_TP_REL_LOC : PS_TP_DATA_LOC;
		decl += decl[2] == 'r' ? 10 : 11;
		loc = true;
	}
	/* the name is the last word, before any [..] (which __data_loc puts
	 * on the type: "char[] filename") */
	if (br && !loc) {
		dim = strtol(br + 1, NULL, 0);
		*br = '\0';
	} else if (br) {
		memmove(br, strchr(br, ']') ? strchr(br, ']') + 1 : br + 1,
			strlen(strchr(br, ']') ? strchr(br, ']') + 1 : br + 1) + 1);
	}
	decl = trim(decl);
	sp = strrchr(decl, ' ');
	if (!sp)
		return false;
	*sp = '\0';
	*name = trim(sp + 1);
	*type = trim(decl);
	if (**name == '*') { /* "char *name" written without the blank */
		(*name)++;
		return **name != '\0';
	}
	if (loc) {
		f->is_string = is_char_type(*type);
		f->elem_size = f->is_string ? 1 : type_size(*type);
		return true;
	}
	if (dim > 0) {
		f->count = (uint32_t)dim;
		f->elem_size = f->size / f->count;
		f->is_string = is_char_type(*type) && f->elem_size == 1;
		f->kind = f->is_string ? PS_TP_STRING : PS_TP_ARRAY;
		return f->elem_size > 0;
	}
	f->kind = PS_TP_INT;
	f->count = 1;
	f->elem_size = f->size;
	return true;
}

/* One "field:..." line into f, with its strings appended to the blob. */
static bool parse_line(char *line, struct ps_tp_field *f, char **blob, size_t *used, size_t *cap)
{
	char *decl = strstr(line, "field:"), *semi, *type, *name, *p;
	unsigned off, size, sgn;

	memset(f, 0, sizeof(*f));
	if (!decl || !(semi = strchr(decl, ';')))
		return false;
	*semi = '\0';
	if (!(p = strstr(semi + 1, "offset:")) || sscanf(p, "offset:%u;", &off) != 1 ||
	    !(p = strstr(p, "size:")) || sscanf(p, "size:%u;", &size) != 1 ||
	    !(p = strstr(p, "signed:")) || sscanf(p, "signed:%u;", &sgn) != 1)
		return false;
	f->offset = off;
	f->size = size;
	f->is_signed = sgn != 0;
	if (!parse_decl(decl + 6, f, &type, &name))
		return false;
	if (f->kind == PS_TP_INT && size != 1 && size != 2 && size != 4 && size != 8)
		f->kind = PS_TP_OTHER; /* a struct or a 16-byte integer: raw bytes only */
	for (int k = 0; k < 2; k++) {
		const char *str = k ? name : type;
		size_t n = strlen(str) + 1;

		if (*used + n > *cap) {
			size_t ncap = (*cap + n) * 2;
			char *nb = realloc(*blob, ncap);

			if (!nb)
				return false;
			*blob = nb;
			*cap = ncap;
		}
		memcpy(*blob + *used, str, n);
		/* offsets for now: the blob may still move */
		if (k)
			f->name = (const char *)(uintptr_t)*used;
		else
			f->type = (const char *)(uintptr_t)*used;
		*used += n;
	}
	return true;
}

/* A syscall's char pointer is a user string (a path, a name) unless a
 * length follows it: then it is a buffer (read's buf, count; write's;
 * getsockopt's optval, optlen), which has no NUL to stop at. */
static void mark_user_strings(struct ps_tp_format *fmt)
{
	static const char *const lengths[] = {"len", "size", "count", "bufsiz"};

	for (size_t i = 0; i < fmt->nfields; i++) {
		struct ps_tp_field *f = &fmt->fields[i];
		const char *next = i + 1 < fmt->nfields ? fmt->fields[i + 1].name : "";
		bool buffer = false;

		if (f->kind != PS_TP_INT || f->size != 8 ||
		    (strcmp(f->type, "const char *") && strcmp(f->type, "char *")))
			continue;
		for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]); k++)
			buffer |= strstr(next, lengths[k]) != NULL;
		f->user_string = !buffer;
	}
}

static int load(const char *path, const char *tracepoint, struct ps_tp_format **out)
{
	FILE *fp = fopen(path, "re");
	struct ps_tp_format *fmt = calloc(1, sizeof(*fmt));
	char line[1024], *blob = NULL;
	size_t used = 0, cap = 0, fcap = 0;
	int err = 0;

	if (!fp || !fmt) {
		err = fp ? -ENOMEM : -errno;
		goto fail;
	}
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long id;

		if (sscanf(line, "ID: %llu", &id) == 1)
			fmt->id = id;
		if (!strstr(line, "field:"))
			continue;
		if (fmt->nfields == fcap) {
			size_t n = fcap ? fcap * 2 : 16;
			struct ps_tp_field *v = realloc(fmt->fields, n * sizeof(*v));

			if (!v) {
				err = -ENOMEM;
				goto fail;
			}
			fmt->fields = v;
			fcap = n;
		}
		if (parse_line(line, &fmt->fields[fmt->nfields], &blob, &used, &cap))
			fmt->nfields++;
	}
	if (!(fmt->name = strdup(tracepoint))) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < fmt->nfields; i++) { /* the blob stays put from here */
		fmt->fields[i].name = blob + (uintptr_t)fmt->fields[i].name;
		fmt->fields[i].type = blob + (uintptr_t)fmt->fields[i].type;
	}
	if (!strncmp(tracepoint, "syscalls:sys_enter_", 19))
		mark_user_strings(fmt);
	fclose(fp);
	*out = fmt;
	return 0; /* blob is owned through the fields, kept for the process */
fail:
	if (fp)
		fclose(fp);
	if (fmt)
		free(fmt->fields);
	free(fmt);
	free(blob);
	return err;
}

const struct ps_tp_format *ps_tp_format__get(const char *tracepoint, int *errp)
{
	struct ps_tp_format *f;
	const char *colon = tracepoint ? strchr(tracepoint, ':') : NULL;
	char path[PATH_MAX];
	int err;

	if (!colon || !ps_ev__safe_component(tracepoint, (size_t)(colon - tracepoint)) ||
	    !ps_ev__safe_component(colon + 1, strlen(colon + 1))) {
		err = -EINVAL;
		goto fail;
	}
	pthread_mutex_lock(&cache_lock);
	for (f = cache; f && strcmp(f->name, tracepoint); f = f->next)
		;
	pthread_mutex_unlock(&cache_lock);
	if (f)
		return f;
	if ((err = ps_ev__tracepoint_path(tracepoint, "format", path, sizeof(path))) < 0 ||
	    (err = load(path, tracepoint, &f)) < 0)
		goto fail;
	pthread_mutex_lock(&cache_lock);
	f->next = cache;
	cache = f;
	pthread_mutex_unlock(&cache_lock);
	return f;
fail:
	if (errp)
		*errp = err;
	errno = -err;
	return NULL;
}

uint64_t ps_tp_format__id(const struct ps_tp_format *f)
{
	return f ? f->id : 0;
}

size_t ps_tp_format__count(const struct ps_tp_format *f)
{
	return f ? f->nfields : 0;
}

const struct ps_tp_field *ps_tp_format__field(const struct ps_tp_format *f, size_t i)
{
	return f && i < f->nfields ? &f->fields[i] : NULL;
}

const struct ps_tp_field *ps_tp_format__find(const struct ps_tp_format *f, const char *name)
{
	for (size_t i = 0; f && i < f->nfields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}

/* Where a field's bytes are in this record, and how many: false when the
 * record is too short or a dynamic field points outside it. */
static bool span(const struct ps_tp_field *f, const uint8_t *raw, size_t size, size_t *at,
		 size_t *len)
{
	uint32_t loc;

	if ((size_t)f->offset + f->size > size)
		return false;
	if (f->kind != PS_TP_DATA_LOC && f->kind != PS_TP_REL_LOC) {
		*at = f->offset;
		*len = f->size;
		return true;
	}
	if (f->size < 4)
		return false;
	memcpy(&loc, raw + f->offset, 4);
	*at = (loc & 0xffff) + (f->kind == PS_TP_REL_LOC ? f->offset + 4u : 0u);
	*len = loc >> 16;
	if (*at > size)
		return false;
	if (*at + *len > size) /* cut where the record was (BPF copies at most 8 KiB) */
		*len = size - *at;
	return true;
}

int ps_tp_field__int(const struct ps_tp_field *f, const void *raw, size_t size, size_t i,
		     int64_t *v)
{
	size_t at, len, es;
	uint64_t u = 0;

	if (!f || !raw || !span(f, raw, size, &at, &len))
		return -ERANGE;
	es = f->elem_size ? f->elem_size : 1;
	if (f->kind == PS_TP_OTHER || (es != 1 && es != 2 && es != 4 && es != 8) ||
	    (i + 1) * es > len)
		return -ERANGE;
	memcpy(&u, (const uint8_t *)raw + at + i * es, es); /* little-endian hosts */
	if (f->is_signed && es < 8 && (u >> (es * 8 - 1)) & 1)
		u |= ~UINT64_C(0) << (es * 8); /* sign-extend */
	*v = (int64_t)u;
	return 0;
}

int ps_tp_field__bytes(const struct ps_tp_field *f, const void *raw, size_t size, const void **p,
		       size_t *len)
{
	size_t at;

	if (!f || !raw || !span(f, raw, size, &at, len))
		return -ERANGE;
	*p = (const uint8_t *)raw + at;
	if (f->is_string) /* up to the NUL, which a fixed char[] may lack */
		*len = strnlen(*p, *len);
	return 0;
}

size_t ps_tp_field__count(const struct ps_tp_field *f, const void *raw, size_t size)
{
	size_t at, len;

	if (!f || !raw || !span(f, raw, size, &at, &len))
		return 0;
	return len / (f->elem_size ? f->elem_size : 1);
}
