/*
 * fuzz_input.h - what the fuzzing targets share: the input format
 * (optional lines "--set key=value", at most 8, then the scenario's YAML)
 * and the frame of one input: load the scenario as `aisim check` would,
 * hand an accepted one to the target's body, release everything.  An error
 * without a message is a bug (abort).
 */
#ifndef AISIM_FUZZ_INPUT_H
#define AISIM_FUZZ_INPUT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/scenario.h"

static int fuzz_one(const uint8_t *data, size_t size, int (*body)(scenario *sc, err *e))
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    const char *sets[8];
    int nsets = 0;
    char *p = text;
    while (nsets < 8 && strncmp(p, "--set ", 6) == 0) {
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        sets[nsets++] = p + 6;
        p = nl + 1;
    }
    scenario sc;
    err e = {0};
    int r = scenario_load_text(&sc, "fuzz.yaml", p, strlen(p), "examples/core", sets,
                               nsets, &e);
    if (r == 0) {
        r = body(&sc, &e);
        scenario_fini(&sc);
    }
    if (r != 0 && e.msg[0] == '\0')
        abort();            /* every error must say something */
    free(text);
    return 0;
}

#endif
