/*
 * complete.c: TAB in the REPL (perfscript -i). Inside a string literal,
 * event names (what -l lists); outside, Lua names: globals, or after the
 * last '.' or ':' the fields or methods of what the path before it names,
 * from tables and from metatables (__index tables, and the sample object's
 * __fields), so "c:st" completes a counter's start and "s.ca" a sample's
 * callchain. Lookups run protected: a strict _G may raise.
 */
#include <stdlib.h>
#include <string.h>

#include <editline/readline.h>
#include <lauxlib.h>

#include "base/array.h"
#include "cli/repl.h"

static struct ps_script *complete_sc;	  /* libedit's callbacks have no context */
static struct ps_event_list *event_names; /* what -l lists, loaded on first TAB */
static char **cands;			  /* candidates of the completion under way */
static size_t ncands, capcands, next_cand;

static void cands_free(void)
{
	for (size_t i = 0; i < ncands; i++)
		free(cands[i]);
	free(cands);
	cands = NULL;
	ncands = capcands = next_cand = 0;
}

static void cand_add(const char *prefix, const char *name, const char *text)
{
	size_t pl = strlen(prefix), tl = strlen(text);

	if (strncmp(text, prefix, pl < tl ? pl : tl) != 0)
		return;
	if (pl < tl && strncmp(text + pl, name, tl - pl) != 0)
		return;
	if (ps_array__reserve(&cands, &capcands, ncands + 1, sizeof(*cands)))
		return;
	if (asprintf(&cands[ncands], "%s%s", prefix, name) >= 0)
		ncands++;
}

/* The string keys of the table at idx; after ':' only those of functions.
 * A __fields table (the sample object's) maps names to "field"/"method". */
static void keys_of(lua_State *L, int idx, const char *prefix, const char *text, bool methods,
		    bool fields)
{
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		bool fn = fields ? lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "method") == 0
				 : lua_type(L, -1) == LUA_TFUNCTION;

		if (lua_type(L, -2) == LUA_TSTRING && (!methods || fn))
			cand_add(prefix, lua_tostring(L, -2), text);
		lua_pop(L, 1);
	}
}

/* Names for a value: a table's keys, and its metatable's __index table's
 * and __fields' (counters, groups, aggregates, samples). */
static void names_of(lua_State *L, int v, const char *prefix, const char *text, bool methods)
{
	if (lua_type(L, v) == LUA_TTABLE)
		keys_of(L, v, prefix, text, methods, false);
	if (!lua_getmetatable(L, v))
		return;
	if (lua_getfield(L, -1, "__index") == LUA_TTABLE)
		keys_of(L, lua_gettop(L), prefix, text, methods, false);
	lua_pop(L, 1);
	if (lua_getfield(L, -1, "__fields") == LUA_TTABLE)
		keys_of(L, lua_gettop(L), prefix, text, methods, true);
	lua_pop(L, 2);
}

/* Candidates for a name: globals, or after the last '.' or ':' the fields
 * or methods of what the path before it names ("c:st", "perfmon.reg",
 * "s.ca"). Protected: a strict _G's __index may raise, and a table's too. */
static int lua_cands(lua_State *L)
{
	const char *text = lua_touserdata(L, 1);
	const char *sep = NULL, *p = text;
	char prefix[256] = "";

	for (const char *c = text; *c; c++)
		if (*c == '.' || *c == ':')
			sep = c;
	lua_pushglobaltable(L);
	if (sep) {
		if ((size_t)(sep - text) + 2 > sizeof(prefix))
			return 0;
		memcpy(prefix, text, (size_t)(sep - text) + 1); /* "path." or "path:" */
		while (p < sep) { /* walk a.b.c; a ':' before the last ends it */
			const char *q = p + strcspn(p, ".:");

			if (q == p || (*q == ':' && q != sep))
				return 0;
			lua_pushlstring(L, p, (size_t)(q - p));
			lua_gettable(L, -2);
			lua_remove(L, -2);
			if (!lua_istable(L, -1) && !lua_isuserdata(L, -1))
				return 0;
			p = q + 1;
		}
	}
	names_of(L, lua_gettop(L), prefix, text, sep && *sep == ':');
	return 0;
}

/* Whether the cursor is inside a string literal of the line. */
static bool in_string(void)
{
	char quote = 0;

	for (int i = 0; i < rl_point && rl_line_buffer[i]; i++) {
		char c = rl_line_buffer[i];

		if (quote && c == '\\')
			i++;
		else if (quote && c == quote)
			quote = 0;
		else if (!quote && (c == '"' || c == '\''))
			quote = c;
	}
	return quote != 0;
}

static int cand_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, each once: a method can be in a table and in its __index too. */
static void cands_unique(void)
{
	size_t k = 0;

	if (ncands > 1)
		qsort(cands, ncands, sizeof(*cands), cand_cmp);
	for (size_t i = 0; i < ncands; i++) {
		if (k && strcmp(cands[k - 1], cands[i]) == 0)
			free(cands[i]);
		else
			cands[k++] = cands[i];
	}
	ncands = k;
}

static char *complete_next(const char *text, int state)
{
	if (state == 0) {
		cands_free();
		if (in_string()) {
			if (!event_names)
				event_names = ps_event_list__new(NULL);
			for (size_t i = 0; event_names && i < ps_event_list__count(event_names);
			     i++)
				cand_add("", ps_event_list__entry(event_names, i)->name, text);
		} else {
			ps_lua__protect(complete_sc, lua_cands, (void *)text, PS_CALL_SILENT,
					"completion");
		}
		cands_unique();
	}
	return next_cand < ncands ? strdup(cands[next_cand++]) : NULL;
}

static char **complete(const char *text, int start, int end)
{
	(void)start;
	(void)end;
	rl_completion_append_character = '\0';
	return rl_completion_matches(text, complete_next);
}

void ps_cli_complete__install(struct ps_script *sc)
{
	complete_sc = sc;
	rl_attempted_completion_function = complete;
	/* ':' and '.' belong to event and table names, not between words */
	rl_completer_word_break_characters = " \t\n\"'(),=+*/<>{}[];";
}

void ps_cli_complete__free(void)
{
	cands_free();
	ps_event_list__free(event_names);
	event_names = NULL;
	complete_sc = NULL;
}
