! A Fortran MPI program (tests/mpi): rank-dependent work (rank r calls
! spin (r + 1) * 5 times), then ROUNDS
! MPI_SEND/MPI_RECV of 500 double precision values (4000 bytes) around the
! ring, one MPI_ALLREDUCE of 4 integers (16 bytes) and one MPI_BARRIER.
subroutine spin(x)
  double precision, intent(inout) :: x
  integer :: i
  do i = 1, 200000
     x = x + sqrt(dble(i))
  end do
end subroutine spin

subroutine compute(rank, x)
  integer, intent(in) :: rank
  double precision, intent(inout) :: x
  integer :: i
  do i = 1, (rank + 1) * 5
     call spin(x)
  end do
end subroutine compute

subroutine ring(rank, nranks)
  include 'mpif.h'
  integer, intent(in) :: rank, nranks
  integer, parameter :: rounds = 2, n = 500
  double precision :: out(n), in(n)
  integer :: i, ierr, to, from, status(MPI_STATUS_SIZE), v(4), s(4)
  out = rank
  to = mod(rank + 1, nranks)
  from = mod(rank + nranks - 1, nranks)
  do i = 1, rounds
     if (mod(rank, 2) == 0) then
        call MPI_SEND(out, n, MPI_DOUBLE_PRECISION, to, i, MPI_COMM_WORLD, ierr)
        call MPI_RECV(in, n, MPI_DOUBLE_PRECISION, from, i, MPI_COMM_WORLD, status, ierr)
     else
        call MPI_RECV(in, n, MPI_DOUBLE_PRECISION, from, i, MPI_COMM_WORLD, status, ierr)
        call MPI_SEND(out, n, MPI_DOUBLE_PRECISION, to, i, MPI_COMM_WORLD, ierr)
     end if
  end do
  v = rank
  call MPI_ALLREDUCE(v, s, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
end subroutine ring

program fmpi
  include 'mpif.h'
  integer :: ierr, rank, nranks
  double precision :: x
  x = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  call compute(rank, x)
  call ring(rank, nranks)
  if (x < 0) print *, x
  call MPI_FINALIZE(ierr)
end program fmpi
