//! Examples live as `[[example]]` targets; this library is empty on purpose.
