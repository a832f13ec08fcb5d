/*
 * registry.c - every model a scenario can name, in `aisim list` order.
 * A new model adds its ops table here and nowhere else.
 */
#include <string.h>

#include "aisim/model.h"

extern const model_ops queue_model_ops;
extern const model_ops net_model_ops;
extern const model_ops birp_model_ops;
extern const model_ops fedenergy_model_ops;
extern const model_ops stellar_model_ops;
extern const model_ops collective_model_ops;
extern const model_ops sdtcp_model_ops;
extern const model_ops training_model_ops;
extern const model_ops skeleton_model_ops;

static const model_ops *const models[] = {
    &queue_model_ops,
    &net_model_ops,
    &birp_model_ops,
    &fedenergy_model_ops,
    &stellar_model_ops,
    &collective_model_ops,
    &sdtcp_model_ops,
    &training_model_ops,
    &skeleton_model_ops,
    NULL,
};

const model_ops *const *model_all(void) { return models; }

const model_ops *model_find(const char *name)
{
    for (size_t i = 0; models[i]; i++)
        if (strcmp(models[i]->name, name) == 0)
            return models[i];
    return NULL;
}
