/*
 * fuzz_serve_config.c - serve's --config file (src/controller/config.c)
 * through gf_serve_config_read over the defaults.
 */
#include "controller/config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, ".yaml");
	static struct gf_serve_config cfg;
	struct gf_err e = { 0 };
	gf_serve_config_defaults(&cfg);
	fz_answer("config", gf_serve_config_read(path, &cfg, &e), &e);
	gf_serve_config_release(&cfg);
	return 0;
}
