/* Statistics counters: written by one thread at a time (whoever drives the engine), read from
 * any thread (rx_engine_get_stats), hence relaxed atomic stores and loads. */
#ifndef RX_STAT_H
#define RX_STAT_H

static inline void rx_stat_add(long *counter, long n)
{
    __atomic_store_n(counter, *counter + n, __ATOMIC_RELAXED); /* one writer at a time */
}

#endif
