/*
 * common.c - what the commands share: error reporting, output, and the
 * node loading every topology command does first (live machine, XML file
 * or template, with NVML joined when asked).
 */
#include <getopt.h>
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

int gf_cli_bad_option(const char *cmd, char **argv)
{
	const char *opt = argv[optind - 1];
	if (optopt && optopt != '?' && (opt[0] != '-' || opt[1] != '-'))
		gf_cli_error(cmd,
			     "option '-%c' is unknown or needs a value "
			     "(see 'gpufleet %s -h')",
			     optopt, cmd);
	else
		gf_cli_error(cmd,
			     "option '%s' is unknown or needs a value "
			     "(see 'gpufleet %s -h')",
			     opt, cmd);
	return GF_EXIT_USAGE;
}

int gf_cli_print(const char *s, unsigned long len)
{
	if (fwrite(s, 1, len, stdout) != len || fflush(stdout) != 0) {
		perror("gpufleet: cannot write output");
		return GF_EXIT_FAIL;
	}
	return GF_EXIT_OK;
}

bool gf_cli_node_option(int c, const char *arg, struct gf_node_opts *o)
{
	switch (c) {
	case 'x':
		o->xml = arg;
		return true;
	case 't':
		o->template_name = arg;
		return true;
	case 'S':
		o->this_system = true;
		return true;
	case 'N':
		o->nvml = 1;
		return true;
	case 'n':
		o->nvml = 0;
		return true;
	default:
		return false;
	}
}

int gf_cli_node_check(const struct gf_node_opts *o)
{
	if (o->xml && o->template_name) {
		gf_cli_error(o->cmd, "--xml and --template exclude each other");
		return GF_EXIT_USAGE;
	}
	if (o->this_system && o->xml == NULL) {
		gf_cli_error(o->cmd, "--this-system goes with --xml");
		return GF_EXIT_USAGE;
	}
	return 0;
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
		gf_cli_error(o->cmd, "%s", e.msg);
		gf_node_free(n);
		return NULL;
	}
	bool want = o->nvml == 1 ||
		    (o->nvml < 0 && o->xml == NULL && o->template_name == NULL);
	if (want)
		join_nvml(n);
	return n;
}
