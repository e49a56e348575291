//! Examples and tests of vyre; nothing to see here.
