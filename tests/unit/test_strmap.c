/* core/strmap.h: the model-ID lookups of discovery. */
#include <stdio.h>
#include <string.h>

#include "core/strmap.h"
#include "tests/tap.h"

int main(void)
{
    struct bt_strmap m = {0};
    OK(bt_strmap_get(&m, "a") == -1, "an empty map has nothing");
    /* 20,000 keys (it grows from 16 slots, rehashing 11 times): each finds its own
     * value, and a key not put is absent */
    static char keys[20000][48];
    for (int i = 0; i < 20000; i++) {
        snprintf(keys[i], sizeof keys[i], "anthropic.model-%d-v1:0", i);
        *bt_strmap_put(&m, keys[i]) = i;
    }
    int bad = 0;
    for (int i = 0; i < 20000; i++)
        bad += bt_strmap_get(&m, keys[i]) != i;
    OK(!bad && m.n == 20000, "20,000 keys each give their value (%d wrong, %zu kept)", bad, m.n);
    OK(bt_strmap_get(&m, "anthropic.model-20000-v1:0") == -1, "a key never put is absent");
    char copy[48];
    snprintf(copy, sizeof copy, "%s", keys[123]);
    OK(bt_strmap_get(&m, copy) == 123, "keys compare by text, not by pointer");
    int *v = bt_strmap_put(&m, keys[5]);
    OK(*v == 5 && m.n == 20000, "putting a key again keeps its value and the count");
    /* an inserted key starts at -1: a chain's end, the way the collectors use it */
    OK(*bt_strmap_put(&m, "new") == -1 && m.n == 20001, "a new key starts at -1");
    bt_strmap_clear(&m);
    OK(bt_strmap_get(&m, keys[0]) == -1 && m.n == 0, "clear empties it");
    *bt_strmap_put(&m, "x") = 7;
    OK(bt_strmap_get(&m, "x") == 7, "a cleared map takes keys again");
    bt_strmap_free(&m);
    OK(bt_strmap_get(&m, "x") == -1, "a freed map is empty");
    return tap_done();
}
