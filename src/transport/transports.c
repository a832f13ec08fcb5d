/*
 * transports.c - the registry of transports (transport.h): the first is the
 * default of `transport.name`.
 */
#include <string.h>

#include "aisim/transport.h"
#include "systems/stellar/stellar_mp_transport.h"

static const transport_ops *const all[] = {&tcp_transport, &dgram_transport, &rocev2_transport,
                                           &stellar_dgram_transport, NULL};

const transport_ops *const *transport_all(void) { return all; }

const transport_ops *transport_find(const char *name)
{
    for (size_t i = 0; all[i]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}
