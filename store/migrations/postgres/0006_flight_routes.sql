-- Offers look up the flights between two sets of airports over a range of dates: the nonstop and
-- first flights of a search from its origin to its destination and the hubs, the second flights
-- from the hubs to its destination, for one day or a 30-day calendar. The indexes by origin or by
-- destination alone read every departure or arrival of a hub on those dates (300 a day); this one
-- reads the route's.
CREATE INDEX flights_route ON flights (origin, destination, schedule_date, departure_utc);
