-- The tables of the worked example: a training provider's Laravel application, as its
-- migrations would create them. Nothing here is the catalogue's: mapping.sql (beside this
-- folder) maps these tables to the names the catalogue reads.
CREATE TABLE courses (
    id          BIGSERIAL PRIMARY KEY,
    title       VARCHAR(255) NOT NULL,
    delivery    VARCHAR(32) NOT NULL,          -- online, classroom or blended
    summary     TEXT NULL,                     -- HTML
    published   BOOLEAN NOT NULL DEFAULT FALSE,
    created_at  TIMESTAMP(0) NULL,
    updated_at  TIMESTAMP(0) NULL,
    deleted_at  TIMESTAMP(0) NULL              -- soft delete
);
-- A venue is a room with its address: no separate locations table.
CREATE TABLE venues (
    id           BIGSERIAL PRIMARY KEY,
    site         VARCHAR(255) NULL,
    room         VARCHAR(255) NULL,
    address_line VARCHAR(255) NULL,
    city         VARCHAR(255) NULL,
    region       VARCHAR(255) NULL,
    postcode     VARCHAR(16) NULL,
    country_code CHAR(2) NULL,
    created_at   TIMESTAMP(0) NULL,
    updated_at   TIMESTAMP(0) NULL
);
CREATE TABLE course_sessions (
    id         BIGSERIAL PRIMARY KEY,
    course_id  BIGINT NOT NULL REFERENCES courses (id),
    venue_id   BIGINT NULL REFERENCES venues (id),
    starts_on  DATE NOT NULL,
    ends_on    DATE NOT NULL,
    timetable  TEXT NULL,
    price      NUMERIC(10, 2) NOT NULL,        -- in currency units
    capacity   INTEGER NULL,                   -- NULL: no cap
    deposit    NUMERIC(10, 2) NULL,            -- in currency units; NULL: pay in full
    status     VARCHAR(16) NOT NULL DEFAULT 'draft', -- draft, published or cancelled
    created_at TIMESTAMP(0) NULL,
    updated_at TIMESTAMP(0) NULL,
    deleted_at TIMESTAMP(0) NULL
);
CREATE TABLE enrolments (
    id                BIGSERIAL PRIMARY KEY,
    course_session_id BIGINT NOT NULL REFERENCES course_sessions (id),
    user_id           BIGINT NULL,
    status            VARCHAR(16) NOT NULL DEFAULT 'confirmed', -- pending, confirmed or cancelled
    exam_date         DATE NULL,
    created_at        TIMESTAMP(0) NULL,
    updated_at        TIMESTAMP(0) NULL,
    deleted_at        TIMESTAMP(0) NULL
);
