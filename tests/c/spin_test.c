/* The spin policy of csrc/spin.c, fed with the wait times of imagined machines and servers:
 * when a blocking waiter spins, for how long, and what a slow server costs in spinning.
 * No threads, no network: rx_spin_note gets the samples a real engine would record.
 *
 *   gcc -I csrc -I <libcurl include> tests/c/spin_test.c csrc/spin.c csrc/thread_posix.c \
 *       -pthread -o spin_test */
#include <stdio.h>

#include "spin.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static rx_spin fresh(void)
{
    rx_spin s;
    rx_spin_init(&s);
    s.may_spin = 1; /* whatever this machine has: the policy for two CPUs or more */
    return s;
}

/* One wait against a server that answers after server_us, where sleeping adds penalty_us
 * before the waiter runs again. Returns the microseconds spent spinning; *slept (if given)
 * tells whether the wait slept after all, so that its spin was for nothing. */
static int waited(rx_spin *s, int server_us, int penalty_us, int *slept)
{
    int probe;
    int budget = rx_spin_budget_us(s, &probe);
    int caught = budget >= server_us;
    if (slept != NULL)
        *slept = !caught;
    if (caught) {
        rx_spin_note(s, server_us, RX_WAIT_SPUN, probe);
        return server_us;
    }
    rx_spin_note(s, server_us + penalty_us, RX_WAIT_SLEPT, probe);
    return budget;
}

static int one_wait(rx_spin *s, int server_us, int penalty_us)
{
    return waited(s, server_us, penalty_us, NULL);
}

/* Spinning microseconds over `waits` waits, after `settle` waits to learn the server. */
static long spin_cost(rx_spin *s, int server_us, int penalty_us, int settle, int waits)
{
    for (int i = 0; i < settle; i++)
        one_wait(s, server_us, penalty_us);
    long spun = 0;
    for (int i = 0; i < waits; i++)
        spun += one_wait(s, server_us, penalty_us);
    return spun;
}

static int spins_now(rx_spin *s) { return rx_spin_is_on(s); }

int main(void)
{
    /* A fast server on a fast machine: spin, for a little longer than the wait. */
    rx_spin s = fresh();
    spin_cost(&s, 30, 40, 50, 0);
    int probe, budget = rx_spin_budget_us(&s, &probe);
    CHECK(budget >= 30 && budget <= 60 && !probe, "30 us waits: budget %d", budget);

    /* A slower machine: answers take 70 us (over the 60 us floor), and a sleep costs 50 us
     * more. The first waits cannot know that and sleep; a probe then measures both, the cap
     * rises to twice the penalty, and from then on waits spin. */
    s = fresh();
    spin_cost(&s, 70, 50, 200, 0);
    CHECK(rx_spin_cap_us(&s) >= 90 && rx_spin_cap_us(&s) <= 110, "cap %d, want ~100",
          rx_spin_cap_us(&s));
    CHECK(spins_now(&s), "70 us waits with a 50 us wake-up penalty should spin (estimate %d)",
          s.wait_estimate_us);
    long spun = spin_cost(&s, 70, 50, 0, 1000);
    CHECK(spun == 70 * 1000, "every wait should end in its spin: %ld us spun", spun);

    /* The same server on a machine where sleeping costs next to nothing: no spinning beyond
     * the floor, and the probes that keep finding that out become rare. */
    s = fresh();
    spun = spin_cost(&s, 200, 10, 2000, 10000);
    CHECK(!spins_now(&s), "200 us waits with a 10 us penalty should not spin");
    CHECK(s.probe_every == 256, "probes should have backed off: every %d", s.probe_every);
    CHECK(spun / 10000 <= 3, "spinning cost %ld us per wait", spun / 10000);

    /* A slow server (1 ms): a probe spins for nothing now and then, nothing else. */
    s = fresh();
    spun = spin_cost(&s, 1000, 50, 2000, 10000);
    CHECK(!spins_now(&s), "1 ms waits should not spin");
    CHECK(spun / 10000 <= 2, "spinning cost %ld us per wait for a 1 ms server", spun / 10000);

    /* ... until it gets fast again: within a few probes spinning is back, and probes are
     * frequent again for the next time it goes off. */
    int waits = 0;
    while (!spins_now(&s) && waits < 2000) {
        one_wait(&s, 30, 50);
        waits++;
    }
    CHECK(spins_now(&s), "spinning should be back after the server got fast (%d waits)", waits);
    CHECK(waits <= 300, "%d waits before spinning came back", waits);
    CHECK(s.probe_every == 16, "probes should be frequent again: every %d", s.probe_every);

    /* A server that mostly answers in 30 us but now and then takes 1 ms: the slow answers
     * must not pass for a wake-up penalty (which would raise the cap and have every wait spin
     * long before it sleeps through the slow ones). Spins that end in a sleep anyway stay
     * rare. */
    for (int slow_percent = 10; slow_percent <= 50; slow_percent += 20) {
        s = fresh();
        unsigned seed = 1;
        long wasted = 0;
        for (int i = 0; i < 20000; i++) {
            seed = seed * 1103515245u + 12345u;
            int server_us = (int)((seed >> 16) % 100) < slow_percent ? 1000 : 30;
            int slept;
            int spun_us = waited(&s, server_us, 50, &slept);
            if (i >= 10000 && slept)
                wasted += spun_us;
        }
        CHECK(wasted / 10000 <= 4, "%d%% slow answers: %ld us spun for nothing per wait",
              slow_percent, wasted / 10000);
    }

    /* The cap never exceeds its ceiling, however large the penalty looks. */
    s = fresh();
    spin_cost(&s, 100, 5000, 500, 0);
    CHECK(rx_spin_cap_us(&s) <= 250, "cap %d over the ceiling", rx_spin_cap_us(&s));
    spun = spin_cost(&s, 400, 5000, 500, 1000);
    CHECK(spun / 1000 <= 250, "a 400 us server cost %ld us of spinning per wait", spun / 1000);

    /* One CPU: never spin. */
    s = fresh();
    s.may_spin = 0;
    CHECK(rx_spin_budget_us(&s, &probe) == 0, "spun with one CPU");

    if (failures == 0)
        printf("spin_test: all checks passed\n");
    return failures ? 1 : 0;
}
