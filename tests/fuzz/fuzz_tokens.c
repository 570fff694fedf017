/*
 * fuzz_tokens.c - serve's --token-file (src/server/auth.c) through
 * gf_auth_read, then a lookup of the file's first line as a bearer
 * header and as a bare token.
 */
#include <sys/stat.h>

#include "fuzz.h"
#include "server/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, "");
	/* gf_auth_read warns about a loose mode: keep it quiet */
	chmod(path, 0600);
	struct gf_auth a;
	struct gf_err e = { 0 };
	memset(&a, 0, sizeof(a));
	int rc = gf_auth_read(path, &a, &e);
	fz_answer("tokens", rc, &e);
	if (rc == 0) {
		size_t n = 0;
		while (n < size && n < 200 && data[n] != '\n')
			n++;
		char *tok = fz_str(data, n);
		char hdr[256];
		snprintf(hdr, sizeof(hdr), "Bearer %s", tok);
		(void)gf_auth_check(&a, hdr);
		(void)gf_auth_find(&a, tok);
		(void)gf_auth_token_for(&a, true, NULL);
		(void)gf_auth_token_for(&a, false, "vision");
		free(tok);
		gf_auth_release(&a);
	}
	return 0;
}
