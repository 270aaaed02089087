/*
 * fuzz_webconfig.c: libFuzzer target for the web configuration reader
 * (loop/webconfig.c, loop/webtls.c, loop/auth.c): the input is a YAML file
 * as a hostile or careless admin might write it, parsed with file names
 * standing for their contents; a configuration it accepts is then asked
 * for a password, so the users' table is used as the listener would use it.
 * Whatever the file says, the reader must refuse it with a message or
 * build a configuration, never read or write outside what it allocated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loop/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char msg[1024], *text = malloc(n + 1);
	struct ps_webconfig *w;

	if (!text)
		return 0;
	memcpy(text, d, n);
	text[n] = '\0';
	w = ps_webconfig__parse(text, n, "fuzz.yml", NULL, msg, sizeof(msg));
	if (w) {
		(void)ps_webconfig__cert(w);
		(void)ps_webconfig__priorities(w);
		if (ps_webconfig__wants_auth(w))
			(void)ps_webconfig__check(w, "127.0.0.1", "u", "p", 1);
		ps_webconfig__free(w);
	} else if (!memchr(msg, '\0', sizeof(msg))) {
		abort(); /* a refusal always says why */
	}
	free(text);
	return 0;
}
