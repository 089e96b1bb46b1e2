//! Cheap lexical detectors for the kind of thing a window states: a date or time, a number, a
//! person's name, a place. A question's wanted kind ([`intent`](super::intent)) favours the
//! windows that hold one. Words of the query itself do not count: "When is Elin's birthday?"
//! wants a date beside "Elin", not "Elin" again.

use crate::index::intent::Wants;

const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
];

const WEEKDAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mondays",
    "tuesdays",
    "wednesdays",
    "thursdays",
    "fridays",
    "saturdays",
    "sundays",
];

const NUMBER_WORDS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "twenty", "hundred", "thousand", "dozen", "twice", "half",
];

/// Common nouns that name a place.
const PLACE_WORDS: &[&str] = &[
    "airport",
    "apartment",
    "apt",
    "ave",
    "avenue",
    "boulevard",
    "building",
    "cafe",
    "city",
    "clinic",
    "floor",
    "hospital",
    "hotel",
    "lane",
    "office",
    "park",
    "rd",
    "road",
    "room",
    "st",
    "station",
    "street",
    "suite",
    "town",
];

/// Words before a capitalized word that make it a place ("in Lisbon", "at Boeing").
const PLACE_PREPOSITIONS: &[&str] = &["at", "from", "in", "near", "to"];

/// Titles before a name.
const TITLES: &[&str] = &["dr", "mr", "mrs", "ms", "prof"];

/// Whether `text` holds a thing of kind `wants` that is not one of the query's own words
/// (`query_words`, lowercase).
pub fn holds(wants: Wants, text: &str, query_words: &[String]) -> bool {
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == ':' || c == '-' || c == '$' || c == '€'))
        .flat_map(|w| w.split('-'))
        .filter(|w| !w.is_empty())
        .collect();
    let fresh = |w: &str| !query_words.iter().any(|q| q.eq_ignore_ascii_case(w));
    let lower = |w: &str| w.to_lowercase();
    match wants {
        Wants::Date => {
            words.iter().any(|w| {
                let l = lower(w);
                fresh(w) && (MONTHS.contains(&l.as_str()) || WEEKDAYS.contains(&l.as_str()))
            }) || text_has_date_digits(text)
        }
        Wants::Number => words.iter().any(|w| {
            fresh(w)
                && (w.bytes().any(|b| b.is_ascii_digit())
                    || NUMBER_WORDS.contains(&lower(w).as_str()))
        }),
        Wants::Person => words.iter().enumerate().any(|(i, w)| {
            let title_before = i > 0 && TITLES.contains(&lower(words[i - 1]).as_str());
            i > 0 && capitalized(w) && fresh(w) && (title_before || is_name_like(w))
        }),
        Wants::Place => words.iter().enumerate().any(|(i, w)| {
            let l = lower(w);
            let after_preposition =
                i > 0 && PLACE_PREPOSITIONS.contains(&lower(words[i - 1]).as_str());
            fresh(w)
                && (PLACE_WORDS.contains(&l.as_str())
                    || (after_preposition && capitalized(w) && is_name_like(w)))
        }),
        Wants::Directive => false,
    }
}

/// A capitalized word that is not a month or weekday.
fn is_name_like(word: &str) -> bool {
    let l = word.to_lowercase();
    !MONTHS.contains(&l.as_str()) && !WEEKDAYS.contains(&l.as_str())
}

fn capitalized(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
        && word.chars().skip(1).any(char::is_lowercase)
}

/// An ISO date (`2026-03-14`), a day and month in digits (`14/08`) or a clock time (`10:00`).
fn text_has_date_digits(text: &str) -> bool {
    let b = text.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    (0..b.len()).any(|i| {
        let iso = digit(i)
            && digit(i + 1)
            && digit(i + 2)
            && digit(i + 3)
            && b.get(i + 4) == Some(&b'-')
            && digit(i + 5)
            && digit(i + 6);
        let clock = digit(i) && b.get(i + 1) == Some(&b':') && digit(i + 2) && digit(i + 3);
        let slash = digit(i) && b.get(i + 1) == Some(&b'/') && digit(i + 2);
        iso || clock || slash
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn detects_dates_numbers_people_and_places_but_not_the_query_again() {
        let none = q(&[]);
        assert!(holds(Wants::Date, "- Elin's birthday is 14 August.", &none));
        assert!(holds(Wants::Date, "- Class moved to 18:30.", &none));
        assert!(!holds(Wants::Date, "- Elin likes cake.", &none));
        assert!(holds(Wants::Number, "- It cost $4,200.", &none));
        assert!(!holds(Wants::Number, "- It was expensive.", &none));
        assert!(holds(Wants::Person, "- Dentist: Dr. Chidi Okafor.", &none));
        assert!(!holds(Wants::Person, "- Maya's dentist.", &q(&["maya"])));
        assert!(holds(Wants::Place, "- Sam works at Boeing now.", &none));
        assert!(holds(Wants::Place, "- Moved to 88 Harbor Street.", &none));
        assert!(!holds(Wants::Place, "- Sam works hard.", &none));
    }
}
