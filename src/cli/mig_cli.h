/*
 * mig_cli.h - `gpufleet mig` subcommands kept in files of their own.
 */
#ifndef GF_CLI_MIG_CLI_H
#define GF_CLI_MIG_CLI_H

#include <stdio.h>

/* `gpufleet mig proposal`: the controller's MIG proposal. */
int gf_cmd_mig_proposal(int argc, char **argv);
void gf_mig_proposal_help(FILE *f);

#endif
