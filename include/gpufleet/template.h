/*
 * template.h - built-in node templates: nodes gpufleet can show, place on
 * and simulate without any hardware or recorded file.  Ours, generated
 * from a few parameters; modelled on public descriptions of the systems,
 * not copied from any export.
 */
#ifndef GPUFLEET_TEMPLATE_H
#define GPUFLEET_TEMPLATE_H

#include <gpufleet/err.h>
#include <gpufleet/node.h>

/*
 * Build template `name` into n (initialised by the caller) and finish it.
 * GF_ENOTFOUND for an unknown name (e->msg lists the known ones).
 */
int gf_template_build(const char *name, struct gf_node *n,
		      struct gf_err *e) GF_MUST_CHECK;

/* Number of templates, and the name / one-line description of the i-th. */
int gf_template_count(void);
const char *gf_template_name(int i);
const char *gf_template_summary(int i);

#endif
