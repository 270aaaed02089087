/*
 * test_utf8.c: what leaves perfscript is valid UTF-8 (base/utf8.c): the
 * check refuses every kind of malformed sequence, and the repair keeps the
 * valid parts and puts one U+FFFD for each byte that starts no sequence.
 */
#include <string.h>

#include "base/utf8.h"
#include "tap.h"

static void repaired(const char *in, const char *want, const char *what)
{
	char out[64];
	size_t n = ps_utf8__repair(in, strlen(in), out);

	out[n] = '\0';
	tap_ok(!strcmp(out, want) && ps_utf8__valid(out, n), "%s: repaired as it should be", what);
}

int main(void)
{
	static const struct {
		const char *s, *what;
		bool valid;
	} cases[] = {
	    {"cycles", "ASCII", true},
	    {"caf\xc3\xa9", "two bytes", true},
	    {"\xe2\x82\xac", "three bytes (the euro sign)", true},
	    {"\xf0\x9f\x94\xa5", "four bytes", true},
	    {"\xef\xbf\xbd", "U+FFFD itself", true},
	    {"\x80", "a stray continuation byte", false},
	    {"\xc0\x80", "an overlong NUL", false},
	    {"\xe0\x80\xaf", "an overlong slash", false},
	    {"\xed\xa0\x80", "a lone surrogate (CESU-8, as a Python name may hold)", false},
	    {"\xf4\x90\x80\x80", "past U+10FFFF", false},
	    {"\xe2\x82", "a sequence cut short", false},
	    {"\xff", "0xff", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tap_ok(ps_utf8__valid(cases[i].s, strlen(cases[i].s)) == cases[i].valid, "%s: %s",
		       cases[i].what, cases[i].valid ? "valid" : "invalid");
	repaired("caf\xc3\xa9", "caf\xc3\xa9", "valid text");
	repaired("x\xff\xfey", "x\xef\xbf\xbd\xef\xbf\xbdy", "two bad bytes");
	repaired("a\xed\xa0\x80"
		 "b",
		 "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
		 "b",
		 "a surrogate");
	repaired("\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd", "a sequence cut short at the end");
	return tap_done();
}
