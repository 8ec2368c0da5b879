/* Watched sockets and their registrations with the engine's poller (see sockets.h). */
#include "sockets.h"
#include "heap.h"

#include "buffer.h"
#include "stat.h"

#include <stdlib.h>
#include <string.h>

void rx_sockets_init(rx_sockets *s, rx_poller *poller)
{
    s->poller = poller;
    s->slots = NULL;
    s->len = 0;
    s->changes = 0;
}

void rx_sockets_free(rx_sockets *s)
{
    rx_free(s->slots);
    s->slots = NULL;
    s->len = 0;
}

static rx_socket_slot *existing_slot(const rx_sockets *s, rx_socket_t fd)
{
    return fd != RX_SOCKET_BAD && (size_t)fd < s->len ? &s->slots[fd] : NULL;
}

/* A descriptor whose close the engine hears of, or that lasts as long as the engine. */
static int parkable(const rx_socket_slot *slot) { return slot->connection || slot->lasting; }

/* The slot for fd, growing the table; NULL when out of memory. */
static rx_socket_slot *slot_for(rx_sockets *s, rx_socket_t fd)
{
    if (fd == RX_SOCKET_BAD)
        return NULL;
    rx_socket_slot *slots = rx_table_grow(s->slots, &s->len, sizeof *s->slots, (size_t)fd);
    if (slots == NULL)
        return NULL;
    s->slots = slots;
    return &slots[fd];
}

static int register_events(rx_sockets *s, rx_socket_t fd, unsigned events, int registered)
{
    rx_stat_add(&s->changes, 1);
    return rx_poller_set(s->poller, fd, events, registered);
}

int rx_sockets_watch(rx_sockets *s, rx_socket_t fd, unsigned events)
{
    rx_socket_slot *slot = slot_for(s, fd);
    if (slot == NULL) /* out of memory: no bookkeeping, so no parking either */
        return register_events(s, fd, events, 0);
    slot->wanted = (uint8_t)events;
    if (slot->watched == events)
        return 0; /* a parked socket taken back as it was: the point of parking */
    if (register_events(s, fd, events, slot->watched != 0) != 0) {
        slot->watched = 0;
        return -1;
    }
    slot->watched = (uint8_t)events;
    return 0;
}

static void unregister(rx_sockets *s, rx_socket_t fd, rx_socket_slot *slot)
{
    rx_stat_add(&s->changes, 1);
    rx_poller_remove(s->poller, fd);
    if (slot != NULL)
        slot->watched = 0;
}

void rx_sockets_unwatch(rx_sockets *s, rx_socket_t fd)
{
    rx_socket_slot *slot = existing_slot(s, fd);
    if (slot != NULL) {
        slot->wanted = 0;
        slot->readable_at_ms = 0; /* a transfer that reuses the connection starts afresh */
        /* Only for reading: a socket parked for writing would report an event at every wait. */
        if (parkable(slot) && slot->watched == RX_POLL_IN)
            return;
    }
    unregister(s, fd, slot);
}

int rx_sockets_event(rx_sockets *s, rx_socket_t fd, unsigned events, int64_t now_ms)
{
    rx_socket_slot *slot = existing_slot(s, fd);
    if (slot == NULL)
        return 0;
    if (slot->wanted == 0 && slot->watched != 0) {
        unregister(s, fd, slot); /* libcurl looks at a pooled connection before reusing it */
        return 1;
    }
    if (events & RX_POLL_IN)
        slot->readable_at_ms = now_ms;
    return 0;
}

int64_t rx_sockets_readable_at(const rx_sockets *s, rx_socket_t fd)
{
    rx_socket_slot *slot = existing_slot(s, fd);
    return slot != NULL ? slot->readable_at_ms : 0;
}

int rx_sockets_may_park(const rx_sockets *s, rx_socket_t fd)
{
    const rx_socket_slot *slot = existing_slot(s, fd);
    return slot != NULL && parkable(slot);
}

void rx_sockets_lasting(rx_sockets *s, rx_socket_t fd)
{
    rx_socket_slot *slot = existing_slot(s, fd);
    if (slot != NULL)
        slot->lasting = 1;
}

void rx_sockets_opened(rx_sockets *s, rx_socket_t fd)
{
    rx_socket_slot *slot = slot_for(s, fd);
    if (slot == NULL)
        return; /* not marked as a connection: never parked */
    memset(slot, 0, sizeof *slot); /* a new socket under a number that may have been used */
    slot->connection = 1;
}

void rx_sockets_closing(rx_sockets *s, rx_socket_t fd)
{
    rx_socket_slot *slot = existing_slot(s, fd);
    if (slot == NULL)
        return;
    /* Closing forgets the registration only when no other descriptor refers to the socket: a
     * child forked meanwhile holds a copy, and the stale registration would then report
     * events under a number that may be another socket's by then. */
    if (slot->watched != 0)
        unregister(s, fd, slot);
    memset(slot, 0, sizeof *slot);
}
