/*
 * test_tpformat.c: unit tests of tracepoint formats (runtime/event/tpformat.c):
 * the fixture tracefs's format files (copies of a 6.18 kernel's, and one made
 * up to hold every kind of field) parse into the fields the kernel wrote,
 * and records built here decode to the values put in them: integers by size
 * and sign, char[] and __data_loc / __rel_loc strings, arrays, and records
 * too short for a field, which decode to nothing rather than past their end.
 * Every format of the machine's own tracefs parses too. Runs from the
 * repository root.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfscript.h"
#include "tap.h"

static void test_sched_switch(void)
{
	const struct ps_tp_format *f = ps_tp_format__get("sched:sched_switch", NULL);
	const struct ps_tp_field *prev, *pid, *state;
	uint8_t rec[64] = {0};
	const void *p;
	size_t len;
	int64_t v = 0;

	if (!tap_ok(f != NULL, "sched:sched_switch's format parses"))
		return;
	tap_is_u64(ps_tp_format__count(f), 11, "11 fields, the common ones included");
	prev = ps_tp_format__find(f, "prev_comm");
	pid = ps_tp_format__find(f, "next_pid");
	state = ps_tp_format__find(f, "prev_state");
	tap_ok(prev && prev->kind == PS_TP_STRING && prev->offset == 8 && prev->size == 16 &&
		   !strcmp(prev->type, "char"),
	       "prev_comm: char[16] at 8");
	tap_ok(pid && pid->kind == PS_TP_INT && pid->size == 4 && pid->is_signed &&
		   !strcmp(pid->type, "pid_t"),
	       "next_pid: a signed 4-byte pid_t");
	memcpy(rec + 8, "bash", 5);
	memcpy(rec + 40, "0123456789abcdef", 16); /* next_comm fills its 16 bytes, no NUL */
	rec[56] = 0xfe, rec[57] = 0xff, rec[58] = 0xff, rec[59] = 0xff; /* next_pid -2 */
	rec[32] = 0x01;							/* prev_state 1 */
	tap_ok(ps_tp_field__bytes(prev, rec, sizeof(rec), &p, &len) == 0 && len == 4 &&
		   !memcmp(p, "bash", 4),
	       "a char[] string ends at its NUL");
	tap_ok(ps_tp_field__bytes(ps_tp_format__find(f, "next_comm"), rec, sizeof(rec), &p, &len) ==
		       0 &&
		   len == 16,
	       "a char[] that fills its field ends at the field");
	tap_ok(ps_tp_field__int(pid, rec, sizeof(rec), 0, &v) == 0 && v == -2,
	       "a signed int is sign-extended");
	tap_ok(ps_tp_field__int(state, rec, sizeof(rec), 0, &v) == 0 && v == 1, "a long");
	tap_ok(ps_tp_field__int(pid, rec, 59, 0, &v) == -ERANGE,
	       "a record too short for the field decodes to -ERANGE");
	tap_ok(ps_tp_format__get("sched:sched_switch", NULL) == f,
	       "formats are read once and kept");
}

static void test_loc(void)
{
	const struct ps_tp_format *f = ps_tp_format__get("irq:irq_handler_entry", NULL);
	const struct ps_tp_field *name = ps_tp_format__find(f, "name");
	uint8_t rec[32] = {0};
	const void *p;
	size_t len;
	uint32_t loc = 6u << 16 | 16; /* 6 bytes at offset 16 */

	tap_ok(name && name->kind == PS_TP_DATA_LOC && name->is_string, "__data_loc char[] name");
	memcpy(rec + 12, &loc, 4);
	memcpy(rec + 16, "timer", 6);
	tap_ok(ps_tp_field__bytes(name, rec, sizeof(rec), &p, &len) == 0 && len == 5 &&
		   !memcmp(p, "timer", 5),
	       "a __data_loc string from its offset and length");
	loc = 6u << 16 | 30;
	memcpy(rec + 12, &loc, 4);
	memcpy(rec + 30, "ti", 2);
	tap_ok(ps_tp_field__bytes(name, rec, sizeof(rec), &p, &len) == 0 && len == 2 &&
		   !memcmp(p, "ti", 2),
	       "a __data_loc string the record cuts gives the bytes it holds, not nothing");
	loc = 6u << 16 | 33;
	memcpy(rec + 12, &loc, 4);
	tap_ok(ps_tp_field__bytes(name, rec, sizeof(rec), &p, &len) == -ERANGE,
	       "a __data_loc pointing past the record is refused");
}

/* A syscall's char pointer is a user string unless a length follows it. */
static void test_user_strings(void)
{
	const struct ps_tp_format *open = ps_tp_format__get("syscalls:sys_enter_openat", NULL);
	const struct ps_tp_format *read = ps_tp_format__get("syscalls:sys_enter_read", NULL);
	const struct ps_tp_field *f = ps_tp_format__find(open, "filename");

	tap_ok(f && f->user_string && f->kind == PS_TP_INT && f->offset == 24,
	       "openat's const char *filename is a user string");
	f = ps_tp_format__find(open, "flags");
	tap_ok(f && !f->user_string, "openat's flags is not");
	f = ps_tp_format__find(read, "buf");
	tap_ok(f && !f->user_string, "read's char *buf, followed by its count, is a buffer");
	f = ps_tp_format__find(ps_tp_format__get("sched:sched_switch", NULL), "prev_comm");
	tap_ok(f && !f->user_string, "a char array of another tracepoint is not a user string");
}

static void test_kinds(void)
{
	const struct ps_tp_format *f = ps_tp_format__get("irq:rel_test", NULL);
	const struct ps_tp_field *msg = ps_tp_format__find(f, "msg"),
				 *vals = ps_tp_format__find(f, "vals"),
				 *small = ps_tp_format__find(f, "small"),
				 *mac = ps_tp_format__find(f, "mac"),
				 *ptr = ps_tp_format__find(f, "ptr"),
				 *bar = ps_tp_format__find(f, "bar");
	uint8_t rec[80] = {0};
	uint32_t loc, u[2] = {7, 0xffffffff};
	const void *p;
	size_t len;
	int64_t v = 0;

	if (!tap_ok(f && msg && vals && small && mac && ptr && bar, "a made-up format parses"))
		return;
	tap_ok(msg->kind == PS_TP_REL_LOC && vals->kind == PS_TP_DATA_LOC && !vals->is_string &&
		   vals->elem_size == 4 && mac->kind == PS_TP_ARRAY && mac->count == 6 &&
		   ptr->kind == PS_TP_INT && !strcmp(ptr->name, "ptr") && bar->kind == PS_TP_OTHER,
	       "__rel_loc, __data_loc u32[], u8[6], char *, struct: each its kind");
	loc = 3u << 16 | 32; /* relative to the end of the word at 8: byte 44 */
	memcpy(rec + 8, &loc, 4);
	memcpy(rec + 44, "hi", 3);
	tap_ok(ps_tp_field__bytes(msg, rec, sizeof(rec), &p, &len) == 0 && len == 2 &&
		   !memcmp(p, "hi", 2),
	       "a __rel_loc string, placed from the end of its word");
	loc = 8u << 16 | 48;
	memcpy(rec + 12, &loc, 4);
	memcpy(rec + 48, u, 8);
	tap_ok(ps_tp_field__count(vals, rec, sizeof(rec)) == 2 &&
		   ps_tp_field__int(vals, rec, sizeof(rec), 1, &v) == 0 && v == 0xffffffff,
	       "a __data_loc u32[] holds 2 unsigned integers");
	rec[16] = 0x80;
	tap_ok(ps_tp_field__int(small, rec, sizeof(rec), 0, &v) == 0 && v == -128, "an s8 of -128");
	rec[17 + 5] = 0xab;
	tap_ok(ps_tp_field__count(mac, rec, sizeof(rec)) == 6 &&
		   ps_tp_field__int(mac, rec, sizeof(rec), 5, &v) == 0 && v == 0xab &&
		   ps_tp_field__int(mac, rec, sizeof(rec), 6, &v) == -ERANGE,
	       "u8[6]: six integers, and no seventh");
	tap_ok(ps_tp_field__int(bar, rec, sizeof(rec), 0, &v) == -ERANGE &&
		   ps_tp_field__bytes(bar, rec, sizeof(rec), &p, &len) == 0 && len == 12,
	       "a struct is bytes, not an integer");
}

static void test_errors(void)
{
	int err = 0;

	tap_ok(!ps_tp_format__get("sched:no_such", &err) && err == -ENOENT,
	       "no such tracepoint: -ENOENT");
	tap_ok(!ps_tp_format__get("../x", &err) && err == -EINVAL &&
		   !ps_tp_format__get("sched:../../x", &err) && !ps_tp_format__get(NULL, NULL),
	       "names that would walk the filesystem are refused");
	tap_ok(ps_tp_format__count(NULL) == 0 && !ps_tp_format__field(NULL, 0) &&
		   !ps_tp_format__find(NULL, "x") && ps_tp_field__count(NULL, "", 0) == 0,
	       "NULL formats and fields answer nothing");
}

/* Every format file of the machine's tracefs parses, each field of it. */
static void test_real(void)
{
	const char *root = "/sys/kernel/tracing/events";
	size_t formats = 0, bad = 0, lines = 0, fields = 0;
	DIR *d = opendir(root), *e;
	struct dirent *s, *t;

	unsetenv("PERFSCRIPT_TRACEFS");
	if (!d) {
		tap_skip(errno == ENOENT ? "tracefs is not mounted at /sys/kernel/tracing"
					 : "tracefs not readable here (need root)",
			 "every format of this machine");
		return;
	}
	while ((s = readdir(d))) {
		char dir[512];

		if (s->d_name[0] == '.' ||
		    snprintf(dir, sizeof(dir), "%s/%s", root, s->d_name) >= (int)sizeof(dir) ||
		    !(e = opendir(dir)))
			continue;
		while ((t = readdir(e))) {
			char name[600], path[1200], line[1024];
			const struct ps_tp_format *f;
			FILE *fp;

			snprintf(path, sizeof(path), "%s/%s/format", dir, t->d_name);
			if (t->d_name[0] == '.' || !(fp = fopen(path, "r")))
				continue;
			size_t n = 0;

			while (fgets(line, sizeof(line), fp))
				n += strstr(line, "field:") != NULL;
			fclose(fp);
			snprintf(name, sizeof(name), "%s:%s", s->d_name, t->d_name);
			f = ps_tp_format__get(name, NULL);
			formats++;
			lines += n;
			fields += ps_tp_format__count(f);
			if ((!f || ps_tp_format__count(f) != n) && bad++ < 5)
				tap_diag("  %s: %zu of %zu fields", name, ps_tp_format__count(f),
					 n);
		}
		closedir(e);
	}
	closedir(d);
	tap_ok(formats > 100 && bad == 0,
	       "all %zu formats of this machine parse (%zu of %zu fields)", formats, fields, lines);
}

int main(void)
{
	setenv("PERFSCRIPT_TRACEFS", "tests/fixtures/tracefs", 1);
	test_sched_switch();
	test_loc();
	test_user_strings();
	test_kinds();
	test_errors();
	test_real();
	return tap_done();
}
