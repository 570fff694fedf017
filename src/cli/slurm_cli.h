/*
 * slurm_cli.h - `gpufleet slurm` subcommands kept in files of their own
 * (docs/slurm.md).
 */
#ifndef GF_CLI_SLURM_CLI_H
#define GF_CLI_SLURM_CLI_H

/* `gpufleet slurm advise`: fragmentation and placement advice. */
int gf_cmd_slurm_advise(int argc, char **argv);

/* `gpufleet slurm usage`: sacct records as chargeback records. */
int gf_cmd_slurm_usage(int argc, char **argv);

#endif
