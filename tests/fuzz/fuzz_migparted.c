/*
 * fuzz_migparted.c - a mig-parted config (src/mig/migparted.c) through
 * gf_mp_read, then gf_mp_validate against the MIG tables.
 */
#include "fuzz.h"
#include "mig/migparted.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, ".yaml");
	struct gf_mp_file f;
	struct gf_err e = { 0 };
	memset(&f, 0, sizeof(f));
	int rc = gf_mp_read(path, &f, &e);
	fz_answer("mig-parted", rc, &e);
	if (rc == 0) {
		struct gf_buf out;
		int warnings = 0;
		gf_buf_init(&out, 0);
		(void)gf_mp_validate(&f, &out, &warnings);
		gf_buf_release(&out);
		gf_mp_release(&f);
	}
	return 0;
}
