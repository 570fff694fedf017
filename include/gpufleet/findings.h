/*
 * findings.h - what a user should act on in a node's topology: GPUs far
 * from every NIC, all GPUs on one socket, multi-GPU pairs without NVLink,
 * unknown locality.  Pure: computed from a finished node.
 */
#ifndef GPUFLEET_FINDINGS_H
#define GPUFLEET_FINDINGS_H

#include <gpufleet/err.h>
#include <gpufleet/node.h>

enum gf_severity { GF_SEV_INFO = 0, GF_SEV_WARN };

#define GF_MAX_FINDINGS 32

struct gf_finding {
	enum gf_severity sev;
	char code[24]; /* stable identifier for scripts: "nic-sys" */
	char msg[480];
};

/*
 * Fill out[0..max) with findings, warnings first.  Returns the count.
 */
int gf_findings_compute(const struct gf_node *n, struct gf_finding *out,
			int max) GF_MUST_CHECK;

const char *gf_severity_name(enum gf_severity s);

#endif
