/*
 * load.c - what every topology command does first: load a node from the
 * live machine, an XML file or a template, and join NVML when asked.
 */
#include <stdarg.h>
#include <stdio.h>

#include <gpufleet/template.h>

#include "../topo/hwloc_load.h"
#include "../topo/nvml.h"
#include "cli.h"

void gf_cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "gpufleet %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int gf_cli_print(const char *s, unsigned long len)
{
	if (fwrite(s, 1, len, stdout) != len || fflush(stdout) != 0) {
		perror("gpufleet: cannot write output");
		return GF_EXIT_FAIL;
	}
	return GF_EXIT_OK;
}

static void join_nvml(struct gf_node *n)
{
	const struct gf_nvml *nv;
	struct gf_err e;
	gf_err_clear(&e);
	if (gf_nvml_open(&nv, &e) != 0) {
		gf_node_note(n, "%s", e.msg);
		return;
	}
	if (gf_nvml_join(nv, n, &e) != 0)
		gf_node_note(n, "%s", e.msg);
	gf_nvml_close();
}

struct gf_node *gf_cli_load_node(const struct gf_node_opts *o)
{
	struct gf_node *n = gf_node_new();
	struct gf_err e;
	int rc;
	gf_err_clear(&e);
	if (o->template_name) {
		rc = gf_template_build(o->template_name, n, &e);
	} else {
		struct gf_topo_source src = { .xml_path = o->xml,
					      .this_system = o->this_system };
		rc = gf_topo_load(n, &src, &e);
	}
	if (rc) {
		fprintf(stderr, "gpufleet: %s\n", e.msg);
		gf_node_free(n);
		return NULL;
	}
	bool want = o->nvml == 1 ||
		    (o->nvml < 0 && o->xml == NULL && o->template_name == NULL);
	if (want)
		join_nvml(n);
	return n;
}
