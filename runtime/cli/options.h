/*
 * options.h: perfscript's command-line options (options.c), parsed for
 * main.c.
 */
#ifndef PS_CLI_OPTIONS_H
#define PS_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "loop/loop.h"

/* What the command line asked for. */
struct ps_cli_options {
	const char *code, *command, *cpus, *output;
	const char *cgroup;	/* -G: a cgroup v2 group's path below its mount */
	const char *chunks[32]; /* every -e, in order (code is the first) */
	int nchunks;
	const char *includes[32];
	int nincludes;
	pid_t pid;
	bool system_wide, json, describe, repl, raw_names;
	bool no_children; /* --no-children: -p/-c's threads, not their children */
	bool answered;	  /* --version or --help printed: nothing more to do */
	int verbose;
	double duration;
	double debuginfod_wait; /* --debuginfod-wait, when debuginfod_set */
	bool debuginfod_set;
	long ring_pages;
	enum ps_backend backend;
	bool list; /* -l */
};

/* Whether every quote of a -c string is closed (one with shell syntax is
 * left to /bin/sh). */
bool ps_cli__quotes_closed(const char *cmd);

/* perfscript --help's text, and the place of the docs (printed by
 * ps_cli__usage: beside the installed binary, or the source tree's). */
extern const char ps_cli_usage[];
void ps_cli__usage(FILE *to);

/* Print "perfscript: " fmt (with arg) and where the options are listed;
 * returns 2, the usage error's exit status. */
int ps_cli__die_usage(const char *fmt, const char *arg);

/* What -T is, for a -T whose value is missing or looks like an option (bcc's
 * opensnoop -T). */
#define PS_CLI_T_IS                                                                                \
	"-T is perfscript's session length, even after the script's name (a timestamp "            \
	"column, bcc's -T, is the script's --timestamp)"

/* Reorder argv as [argv0, our options..., "--", script, script args...];
 * *missing names an option left without its value. malloc'd, or NULL. */
char **ps_cli__split_args(int argc, char **argv, int *outc, const char **missing);

/* getopt over the reordered argv into o; 0, or a usage error's status.
 * --help and --version print and exit. */
int ps_cli__parse_options(int argc, char **argv, struct ps_cli_options *o);

/* -c's string as argv (NULL-terminated, malloc'd), or /bin/sh -c STRING
 * when it has shell syntax; NULL on ENOMEM. */
char **ps_cli__command_argv(const char *cmd);

#endif
