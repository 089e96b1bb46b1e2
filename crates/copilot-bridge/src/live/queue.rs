//! A session's queue of events, in the order they were generated. It is bounded without losing
//! anything: when full, consecutive deltas of one message (or reasoning) are merged; no other
//! event is ever dropped, so a queue full of other events grows past the bound instead.

use std::collections::VecDeque;

use crate::live::event::LiveEvent;

/// Events waiting for `copilot_session_live`.
#[derive(Debug)]
pub struct EventQueue {
    events: VecDeque<LiveEvent>,
    bound: usize,
}

impl EventQueue {
    /// A queue that starts merging deltas at `bound` events.
    pub fn new(bound: usize) -> Self {
        Self {
            events: VecDeque::new(),
            bound: bound.max(1),
        }
    }

    /// Adds an event at the back.
    pub fn push(&mut self, event: LiveEvent) {
        if self.events.len() >= self.bound {
            if let Some(last) = self.events.back_mut()
                && last.absorb(&event)
            {
                return;
            }
            self.compact();
        }
        self.events.push_back(event);
    }

    /// Merges every run of consecutive deltas of one message into one event.
    fn compact(&mut self) {
        let mut merged: VecDeque<LiveEvent> = VecDeque::with_capacity(self.events.len());
        for event in self.events.drain(..) {
            if let Some(last) = merged.back_mut()
                && last.absorb(&event)
            {
                continue;
            }
            merged.push_back(event);
        }
        self.events = merged;
    }

    /// Takes up to `max` events from the front.
    pub fn pop(&mut self, max: usize) -> Vec<LiveEvent> {
        let n = max.min(self.events.len());
        self.events.drain(..n).collect()
    }

    /// How many events wait.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether none wait.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::event::Callback;

    fn delta(id: &str, text: &str) -> LiveEvent {
        LiveEvent::from(Callback::Message {
            message_id: id.into(),
            delta: text.into(),
        })
    }

    #[test]
    fn events_come_out_in_order_and_in_batches() {
        let mut queue = EventQueue::new(100);
        for n in 0..5 {
            queue.push(delta("m1", &n.to_string()));
        }
        assert_eq!(queue.pop(2), [delta("m1", "0"), delta("m1", "1")]);
        assert_eq!(queue.pop(10).len(), 3);
        assert!(queue.is_empty());
    }

    #[test]
    fn a_full_queue_merges_deltas_and_drops_nothing() {
        let mut queue = EventQueue::new(3);
        queue.push(LiveEvent::from(Callback::StartMessage {
            message_id: "m1".into(),
        }));
        for text in ["a", "b", "c", "d"] {
            queue.push(delta("m1", text));
        }
        queue.push(LiveEvent::from(Callback::Idle));
        let events = queue.pop(100);
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                LiveEvent::Callback(Callback::Message { delta, .. }) => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "abcd");
        assert_eq!(events.last(), Some(&LiveEvent::from(Callback::Idle)));
        // Nothing to merge: the bound is passed rather than an event lost.
        let mut queue = EventQueue::new(2);
        for _ in 0..5 {
            queue.push(LiveEvent::from(Callback::Idle));
        }
        assert_eq!(queue.len(), 5);
    }
}
