/*
 * budget.h: the steps of the symbolizer's upkeep, for budget.c and the
 * unit tests; users call ps_symbols__maintain (its schedule) and
 * ps_symbols__give_back (perfscript.h).
 */
#ifndef PS_SYMBOLS_BUDGET_H
#define PS_SYMBOLS_BUDGET_H

#include <stdbool.h>
#include <stddef.h>

#include "perfscript.h"

/* symbols/budget.c, under ps_symbols__maintain (its schedule) and
 * ps_symbols__give_back:
 * ps_symbols__trim gives memory back until it fits under the budget (the
 * files it gave back); ps_symbols__grew, whether a file or its DWARF was
 * read since the last trim (a Go binary's DWARF is tens of MB);
 * ps_symbols__over, whether what it holds is more than 2 MiB past the
 * budget, counted anew only when a file was read since the last call (a
 * burst of new binaries read within one second took the agent from 38 to
 * 77 MB); ps_symbols__drop_pages gives back the pages of the files'
 * mapped images that the page cache holds too, and
 * ps_symbols__drop_cold_pages those not read twice in a row (unwinding a
 * busy library reads the top of its CFI search table and its hot
 * functions' entries again at once: dropping those only cycles them in
 * and out; each page kept is tested again every 8 calls); bytes given
 * back. ps_symbols__forget_answers forgets the cached answers (texts of
 * "func+0x1a", demangled names) when they hold more than keep bytes. */
size_t ps_symbols__trim(struct ps_symbols *syms);
bool ps_symbols__grew(const struct ps_symbols *syms);
bool ps_symbols__over(struct ps_symbols *syms);
size_t ps_symbols__drop_pages(struct ps_symbols *syms);
size_t ps_symbols__drop_cold_pages(struct ps_symbols *syms);
size_t ps_symbols__forget_answers(struct ps_symbols *syms, size_t keep);

#endif
