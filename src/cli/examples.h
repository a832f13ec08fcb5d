/*
 * examples.h - the example scenarios embedded in the binary at build time
 * (scripts/embed.c), so that `aisim demo` and `aisim run core/mm1` work from
 * anywhere.
 */
#ifndef AISIM_CLI_EXAMPLES_H
#define AISIM_CLI_EXAMPLES_H

struct embedded_example {
    const char *name;       /* "core/mm1" */
    const char *path;       /* "examples/core/mm1.yaml": used in messages */
    const char *text;       /* the YAML */
};

/* Terminated by an entry whose name is NULL. */
extern const struct embedded_example embedded_examples[];

#endif
