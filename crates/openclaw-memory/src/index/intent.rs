//! What a query asks for, read from its wording before stop words are dropped: the kind of
//! thing a question wants ("where" a place, "when" a date, "who" a person, "how many" a
//! number), and whether it asks about the user's preferences (which `USER.md` directives
//! answer).

/// The kind of thing a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wants {
    /// "where …": a place.
    Place,
    /// "when …", "what time …", "which day …": a date or time.
    Date,
    /// "who …", "whose …": a person.
    Person,
    /// "how many …", "how much …", "how old …": a number.
    Number,
    /// "what does the user prefer …", "how should …": a directive of `USER.md`.
    Directive,
}

/// Words that make a query a question about the user's preferences.
const PREFERENCE_WORDS: &[&str] = &[
    "favorite",
    "favourite",
    "like",
    "likes",
    "prefer",
    "preference",
    "preferences",
    "preferred",
    "prefers",
    "rather",
    "should",
    "want",
    "wants",
];

/// Words after "how" that ask for a quantity.
const HOW_QUANTITY: &[&str] = &[
    "big", "far", "high", "large", "long", "many", "much", "old", "tall",
];

/// Words after "what" or "which" that ask for a date or time.
const WHAT_DATE: &[&str] = &["date", "day", "month", "time", "year"];

/// Words after "what" or "which" that ask for a number.
const WHAT_NUMBER: &[&str] = &["amount", "cost", "number", "price"];

/// What `query` asks for, if its wording says: the first question word decides.
pub fn wants(query: &str) -> Option<Wants> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if words.iter().any(|w| PREFERENCE_WORDS.contains(&w.as_str())) {
        return Some(Wants::Directive);
    }
    for (i, word) in words.iter().enumerate() {
        let next = words.get(i + 1).map(String::as_str);
        let wants = match word.as_str() {
            "where" => Some(Wants::Place),
            "when" => Some(Wants::Date),
            "who" | "whom" | "whose" => Some(Wants::Person),
            "how" => next
                .filter(|n| HOW_QUANTITY.contains(n))
                .map(|_| Wants::Number),
            "what" | "which" => match next {
                Some(n) if WHAT_DATE.contains(&n) => Some(Wants::Date),
                Some(n) if WHAT_NUMBER.contains(&n) => Some(Wants::Number),
                _ => None,
            },
            _ => None,
        };
        if wants.is_some() {
            return wants;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_words_name_what_is_wanted() {
        assert_eq!(wants("Where does Sam work?"), Some(Wants::Place));
        assert_eq!(wants("When is Elin's birthday?"), Some(Wants::Date));
        assert_eq!(wants("what time is the class"), Some(Wants::Date));
        assert_eq!(wants("Who is Maya's dentist?"), Some(Wants::Person));
        assert_eq!(wants("How much did the camera cost?"), Some(Wants::Number));
        assert_eq!(
            wants("how should answers be formatted"),
            Some(Wants::Directive)
        );
        assert_eq!(
            wants("what does the user prefer for coffee"),
            Some(Wants::Directive)
        );
        assert_eq!(wants("How often is the starter fed?"), None);
        assert_eq!(wants("laptop model"), None);
    }
}
