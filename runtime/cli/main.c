/*
 * main.c: the perfscript command line. From the options (options.c) it
 * builds the target (self, -c command, -p pid, -a/-C CPUs), points output
 * where -o says, and hands the script to the Lua runtime; --describe and -l
 * answer without opening anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "base/advice.h"
#include "base/path.h"
#include "cli/options.h"
#include "cli/repl.h"
#include "lua/output.h"

/* Print a parse error with a caret under the offending token. */
static void print_event_error(const char *spec, const struct ps_event_error *err)
{
	fprintf(stderr, "perfscript: %s\n", err->message);
	if (err->column > 0) {
		size_t len = strlen(err->token);

		fprintf(stderr, "  %s\n  %*s^", spec, err->column - 1, "");
		for (size_t i = 1; i < len; i++)
			fputc('~', stderr);
		fputc('\n', stderr);
	}
}

static int describe(const char *spec, bool json)
{
	struct ps_event_error err = {0};
	struct ps_events *evs = ps_events__parse(spec, &err);
	int rc;

	if (!evs) {
		print_event_error(spec, &err);
		return 1;
	}
	rc = ps_events__describe(evs, stdout, json);
	ps_events__free(evs);
	return rc < 0 ? 1 : 0;
}

/* -l [GLOB]: the events this machine can name, as text or JSON. */
static int list_events(const char *glob, bool json)
{
	struct ps_event_list *l = ps_event_list__new(glob);
	int rc;

	if (!l) {
		fprintf(stderr, "perfscript: cannot list events: %s\n", strerror(errno));
		return 1;
	}
	rc = ps_event_list__print(l, stdout, json);
	if (!json && glob && ps_event_list__count(l) == 0) {
		const char *why = ps_event_list__missing(l);

		fprintf(stderr, "perfscript: no event matches '%s'%s%s\n", glob, why ? "; " : "",
			why ? why : "");
	}
	ps_event_list__free(l);
	return rc < 0 ? 1 : 0;
}

/* Why file (argv[0] of -c) cannot be run, or NULL when it can: checked
 * before anything runs, so a typo costs no begin probes, and said in words
 * a user can act on (execvp's errno would call a directory "permission
 * denied" and a script with a missing #! interpreter "no such file"). */
static const char *command_problem(const char *file, char *why, size_t len)
{
	char buf[4096], line[256];
	struct stat st;
	FILE *f;

	if (ps_path__find_exec(file, buf, sizeof(buf)) < 0) {
		if (!strchr(file, '/'))
			return snprintf(why, len, "'%s': not found in PATH", file), why;
		if (stat(file, &st) < 0)
			return snprintf(why, len, "'%s': no such file", file), why;
		if (S_ISDIR(st.st_mode))
			return snprintf(why, len, "'%s' is a directory", file), why;
		return snprintf(why, len, "'%s' is not executable (chmod +x %s?)", file, file), why;
	}
	f = fopen(buf, "re");
	if (f && fgets(line, sizeof(line), f) && !strncmp(line, "#!", 2)) {
		char *interp = line + 2 + strspn(line + 2, " \t");

		interp[strcspn(interp, " \t\n")] = '\0';
		if (*interp && access(interp, X_OK) != 0) {
			fclose(f);
			return snprintf(why, len, "'%s' asks for the interpreter '%s', which is %s",
					file, interp,
					access(interp, F_OK) ? "not there" : "not executable"),
			       why;
		}
	}
	if (f)
		fclose(f);
	return NULL;
}

/* The session of o's target; NULL with *rc the exit status (2 for a
 * usage error) and the reason said. */
static struct ps_session *make_session(const struct ps_cli_options *o, int *rc)
{
	struct ps_target_opts t = {.sz = sizeof(t), .kind = PS_TARGET_SELF};
	char **cmd = NULL;
	struct ps_session *s;

	if (o->command) {
		cmd = ps_cli__command_argv(o->command);
		if (!cmd) {
			fprintf(stderr, "perfscript: -c wants a command, got '%s'\n", o->command);
			return NULL;
		}
		char why[512];

		if (command_problem(cmd[0], why, sizeof(why))) {
			fprintf(stderr, "perfscript: cannot run the command: %s\n", why);
			free(cmd[0]);
			free(cmd);
			return NULL;
		}
		t.kind = PS_TARGET_COMMAND;
		t.argv = cmd;
	}
	if (o->pid) {
		t.kind = PS_TARGET_PID;
		t.pid = o->pid;
	}
	t.no_children = o->no_children;
	if (o->system_wide || o->cpus || o->cgroup) {
		t.kind = PS_TARGET_CPUS;
		t.cpus = o->cpus;
		t.cgroup = o->cgroup;
	}
	s = ps_session__new(&t);
	if (!s) {
		int err = errno;

		if (err == ESRCH)
			fprintf(stderr, "perfscript: -p %d: no such process\n", (int)o->pid);
		else if ((err == ENOENT || err == ENOTDIR) && o->cgroup)
			fprintf(stderr,
				"perfscript: -G '%s': no such cgroup (a group's path below the "
				"cgroup2 mount, as perf stat -G takes it: see /proc/self/mountinfo "
				"for where cgroup2 is, and mkdir a group there)\n",
				o->cgroup);
		else if (err == ENODEV && o->cgroup)
			fprintf(stderr,
				"perfscript: -G '%s': cgroup v2 is not mounted here "
				"(mount -t cgroup2 none /sys/fs/cgroup/unified)\n",
				o->cgroup);
		else if (err == EINVAL && o->cpus)
			*rc = ps_cli__die_usage("-C '%s': not a list of online CPUs (e.g. 0-1; see "
						"/sys/devices/system/cpu/online)",
						o->cpus);
		else
			fprintf(stderr, "perfscript: cannot set up the target: %s\n",
				strerror(err));
	}
	if (cmd)
		free(cmd[0]);
	free(cmd);
	return s;
}

/* A closed standard stream would hand its number to the next file opened,
 * and the script's output or our own messages would land in it: hold 0, 1
 * and 2 with /dev/null. Returns whether standard output was closed. */
static bool hold_std_fds(void)
{
	bool out_closed = fcntl(STDOUT_FILENO, F_GETFD) < 0;

	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);

		if (got >= 0 && got != fd) {
			dup2(got, fd);
			close(got);
		}
	}
	return out_closed;
}

/* tracefs for root where none is mounted: in perfscript's own mount
 * namespace, so it goes with perfscript however it dies. After the -c
 * command is forked (it stays in the machine's namespace), before threads. */
static void private_tracefs(bool verbose)
{
	char msg[256] = "";
	int rc;

	if (geteuid() != 0)
		return;
	rc = ps_tracefs__mount_private(msg, sizeof(msg));
	if (verbose && rc > 0)
		fprintf(stderr,
			"perfscript: tracefs mounted at /sys/kernel/tracing in perfscript's "
			"own mount namespace\n");
	else if (verbose && rc < 0)
		fprintf(stderr, "perfscript: no tracefs: %s\n", msg);
}

static int run(int argc, char **argv, bool out_closed)
{
	struct ps_cli_options o = {0};
	struct ps_session *session = NULL;
	struct ps_script *sc = NULL;
	const char *chunk;
	char msg[4200];
	int rc, first;
	rc = ps_cli__parse_options(argc, argv, &o);
	if (rc || o.answered)
		return rc;
	first = optind;
	if (!o.repl) /* before the Lua state: its io library takes stdout */
		ps_lua_output__watch(o.code || first >= argc ? NULL : argv[first], out_closed);
	if (o.describe || o.list)
		private_tracefs(o.verbose);
	if (o.describe) {
		if (first + 1 != argc)
			return ps_cli__die_usage("%s", "--describe wants one event string, e.g. "
						       "--describe 'cycles:u'");
		return describe(argv[first], o.json);
	}
	if (o.list) {
		if (first + 1 < argc)
			return ps_cli__die_usage("%s",
						 "-l takes at most one GLOB, e.g. -l 'sched:*'");
		return list_events(first < argc ? argv[first] : NULL, o.json);
	}
	if (o.repl && (o.code || first < argc))
		return ps_cli__die_usage("%s",
					 "-i reads Lua from stdin: give it no script and no -e");
	if (!o.repl && !o.code && first >= argc) {
		if (argc > 2) /* options (before the "--" split_args adds), nothing to run */
			return ps_cli__die_usage(
			    "%s", "no script given (use a script file, -e CHUNK or -i)");
		ps_cli__usage(stderr);
		return 2;
	}
	chunk = o.code || o.repl ? o.code : argv[first++];
	rc = 1;
	session = make_session(&o, &rc);
	if (!session)
		return rc;
	private_tracefs(o.verbose);
	if (o.ring_pages && (rc = ps_session__set_ring_pages(session, (size_t)o.ring_pages)) < 0) {
		fprintf(stderr, "perfscript: -b %ld: %s\n", o.ring_pages, ps_strerror(rc));
		ps_session__free(session);
		return 2;
	}
	ps_session__set_backend(session, o.backend);
	ps_bpf__chain_print(false); /* a fallback's line says what libbpf's warnings would */
	if (o.verbose)
		ps_bpf__set_verbose(true); /* libbpf's log, the verifier's included */
	if (o.output && ps_lua_output__redirect(o.output, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "perfscript: -o %s\n", msg);
		ps_session__free(session);
		return 1;
	}
	sc = ps_lua_script__new(session,
				&(struct ps_script_opts){.sz = sizeof(struct ps_script_opts),
							 .verbose = o.verbose,
							 .duration = o.duration,
							 .command = o.command,
							 .paths = o.includes,
							 .npaths = (size_t)o.nincludes,
							 .raw_names = o.raw_names,
							 .debuginfod_set = o.debuginfod_set,
							 .debuginfod_wait = o.debuginfod_wait});
	if (!sc) {
		fprintf(stderr, "perfscript: cannot start Lua: %s\n", strerror(errno));
		ps_session__free(session);
		return 1;
	}
	rc = o.repl ? ps_cli_repl__run(sc)
		    : ps_lua_script__run(sc, o.code ? o.chunks : &chunk, o.code ? o.nchunks : 1,
					 o.code != NULL, argv + first, argc - first, argv, 1);
	ps_lua_script__free(sc);
	ps_session__free(session);
	return rc;
}

/* What the library's messages leave to the front end: our options. */
static void give_advice(void)
{
	ps_advice__set(PS_ADVICE_LIST_EVENTS, "; see perfscript -l");
	ps_advice__set(PS_ADVICE_RING_PAGES, " (-b PAGES)");
	ps_advice__set(PS_ADVICE_SYSTEM_WIDE, " (-a/-C)");
	ps_advice__set(PS_ADVICE_ATTACH, " (-p PID)");
	ps_advice__set(PS_ADVICE_PROCESS, " (-p PID, -c CMD)");
	ps_advice__set(PS_ADVICE_DURATION, "-T");
	ps_advice__set(PS_ADVICE_BACKEND, "; see --backend");
}

int main(int argc, char **argv)
{
	int n, rc;
	bool out_closed = hold_std_fds();
	const char *missing = NULL;
	char **args = ps_cli__split_args(argc, argv, &n, &missing);

	give_advice();
	if (!args) {
		perror("perfscript");
		return 1;
	}
	if (missing && !strcmp(missing, "-T"))
		rc = ps_cli__die_usage("%s wants a value: SECONDS; " PS_CLI_T_IS, missing);
	else if (missing)
		rc = ps_cli__die_usage("%s wants a value", missing);
	else
		rc = run(n, args, out_closed);
	free(args);
	return ps_lua_output__finish(rc);
}
